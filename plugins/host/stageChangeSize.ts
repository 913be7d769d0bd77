/**
 * How much text a stage handler's change may carry. A change is journaled with the turn and may
 * reach the model on every later call (an injected message), so one handler answering with
 * megabytes would grow the log and every request by that much, each turn.
 */
import { HologramError } from '../../events/index.ts';

/** The most characters of text one change may hold, all its strings together (the person's own message may be 1 MiB). */
export const STAGE_CHANGE_AT_MOST = 1_048_576;

export class StageChangeTooLarge extends HologramError {
  readonly code = 'STAGE_CHANGE_TOO_LARGE';
}

/** Why `change` is too large to take, or undefined. Counts its strings (and keys) without serialising it, and stops once over. */
export const stageChangeTooLarge = (change: unknown, atMost = STAGE_CHANGE_AT_MOST): string | undefined => {
  let size = 0;
  const pending: unknown[] = [change];
  while (pending.length > 0 && size <= atMost) {
    const value = pending.pop();
    if (typeof value === 'string') size += value.length;
    else if (Array.isArray(value)) {
      for (let i = 0; i < value.length && size <= atMost; i++, size++) pending.push(value[i]);
    } else if (typeof value === 'object' && value !== null) {
      for (const key in value) {
        size += key.length;
        if (size > atMost) break;
        pending.push((value as Record<string, unknown>)[key]);
      }
    } else size += 8;
  }
  return size > atMost ? `answered with a change of over ${atMost} characters of text` : undefined;
};
