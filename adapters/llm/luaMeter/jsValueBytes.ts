/** What a JS value will cost once pushed into a VM (pushJs), in heapSize.ts's units. Pure. */
import { SIZES } from './heapSize.ts';

/**
 * Estimated bytes of `value` as Lua tables and strings; stops counting (and returns a number
 * above `limit`) as soon as it passes `limit`, so a huge value is not walked to its end.
 */
export const jsValueBytes = (value: unknown, limit: number): number => {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && bytes <= limit) {
    const item = pending.pop();
    if (typeof item === 'string')
      bytes += SIZES.STRING + 3 * item.length; // UTF-8: at most 3 bytes a UTF-16 unit
    else if (Array.isArray(item)) {
      bytes += SIZES.TABLE + item.length * SIZES.ENTRY;
      if (bytes <= limit) for (const inner of item) pending.push(inner);
    } else if (typeof item === 'object' && item !== null) {
      bytes += SIZES.TABLE;
      for (const [key, inner] of Object.entries(item)) {
        bytes += SIZES.ENTRY + SIZES.STRING + 3 * key.length;
        pending.push(inner);
      }
    }
  }
  return bytes;
};
