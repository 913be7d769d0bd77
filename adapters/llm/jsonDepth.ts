/**
 * How deep a model's tool-call arguments may nest. What the model sends is journaled, shown and
 * handed to a tool, each by code that walks it; arguments nested 1,500 deep overflowed the stack
 * of the turn's journal and wedged the daemon. No tool's parameters nest this deep (a plugin's are
 * refused past 64).
 */
export const ARGUMENTS_DEPTH_AT_MOST = 64;

/** Whether `value` nests deeper than `limit` levels of objects and arrays; walked without recursion. */
export const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
};
