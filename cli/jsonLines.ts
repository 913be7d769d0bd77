/** JSON for events on a terminal: bytes as base64, bigint as string. */
export const toJsonLine = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') };
    if (
      typeof v === 'object' &&
      v !== null &&
      (v as { type?: unknown }).type === 'Buffer' &&
      Array.isArray((v as { data?: unknown }).data)
    ) {
      return { $bytes: Buffer.from((v as { data: number[] }).data).toString('base64') };
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
