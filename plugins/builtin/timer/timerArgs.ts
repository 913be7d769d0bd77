/** Validation of timer_set arguments into a due time. Pure: the current time is passed in. */
import { InvalidTimerArgument } from './errors.ts';

/** The furthest ahead a timer may be set. */
export const MAX_TIMER_MS = 365 * 24 * 60 * 60 * 1000;
/** The longest note kept. */
export const MAX_NOTE_LENGTH = 2000;

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

export type TimerRequest = Readonly<{ dueAt: number; note: string }>;

/** `{seconds | at, note}` → when the timer is due and what it says; throws `InvalidTimerArgument`. */
export const parseTimerRequest = (args: Readonly<Record<string, unknown>>, now: number): TimerRequest => {
  const tool = 'timer_set';
  const note = args.note;
  if (typeof note !== 'string' || note.trim() === '') {
    throw new InvalidTimerArgument(tool, 'note', "'note' must be a non-empty string saying what the timer is for");
  }
  if (note.length > MAX_NOTE_LENGTH) {
    throw new InvalidTimerArgument(tool, 'note', `'note' has ${note.length} characters, more than the ${MAX_NOTE_LENGTH} allowed`);
  }
  const { seconds, at } = args;
  if ((seconds === undefined) === (at === undefined)) {
    throw new InvalidTimerArgument(tool, 'seconds', "give exactly one of 'seconds' (a delay) or 'at' (an ISO time)");
  }
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds * 1000 > MAX_TIMER_MS) {
      throw new InvalidTimerArgument(
        tool,
        'seconds',
        `'seconds' must be a number above 0 and at most ${MAX_TIMER_MS / 1000} (one year); got ${JSON.stringify(seconds)}`,
      );
    }
    return { dueAt: now + Math.ceil(seconds * 1000), note };
  }
  const parsed = typeof at === 'string' && ISO_WITH_ZONE.test(at) ? Date.parse(at) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw new InvalidTimerArgument(
      tool,
      'at',
      `'at' must be an ISO 8601 time with a timezone, like 2030-01-31T09:00:00Z or 2030-01-31T10:00:00+01:00; got ${JSON.stringify(at)}`,
    );
  }
  if (parsed <= now) {
    throw new InvalidTimerArgument(tool, 'at', `'at' ${at} is not in the future (it is now ${new Date(now).toISOString()})`);
  }
  if (parsed - now > MAX_TIMER_MS) {
    throw new InvalidTimerArgument(tool, 'at', `'at' ${at} is more than one year ahead`);
  }
  return { dueAt: parsed, note };
};

/** `1h 2m 3s`-style rendering of a positive duration. */
export const describeDuration = (ms: number): string => {
  let rest = Math.max(0, Math.round(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}s`);
  return parts.join(' ');
};
