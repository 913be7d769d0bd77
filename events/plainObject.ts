/** Whether `value` is an object with keys (a JSON object): not null, not a list. */
export const isPlainObject = <V = unknown>(value: unknown): value is Record<string, V> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
