/**
 * How each plugin's stage handlers answer, over its last calls. Every turn waits on each stage's
 * handlers up to the stage timeout, so a plugin whose handlers time out, or answer only after
 * seconds, costs every turn that much for as long as it runs. A call that timed out or took
 * longer than SLOW_STAGE_ANSWER_MS is a miss; `limit` misses among a plugin's last `window` calls
 * (any of its handlers, so spare handlers or a pattern of answers in between do not reset it)
 * and the hub detaches all its stage handlers.
 */

/** Misses among a plugin's last STAGE_CALLS_WINDOW stage calls that get its stage handlers detached. */
export const STAGE_MISSES_BEFORE_DETACH = 3;
export const STAGE_CALLS_WINDOW = 10;
/** An answer slower than this (half the default stage timeout) holds the person up as a timeout nearly does. */
export const SLOW_STAGE_ANSWER_MS = 2_500;

export class UnansweredStages {
  /** Per plugin, its last calls: true where one was missed. */
  private readonly calls = new Map<string, boolean[]>();

  constructor(
    readonly limit: number = STAGE_MISSES_BEFORE_DETACH,
    readonly window: number = STAGE_CALLS_WINDOW,
  ) {}

  /** Notes a call of one of `plugin`'s handlers; whether the plugin has now missed `limit` of its last `window` (then it starts again). */
  note(plugin: string, missed: boolean): boolean {
    const last = [...(this.calls.get(plugin) ?? []), missed].slice(-this.window);
    if (last.filter(Boolean).length < this.limit) {
      this.calls.set(plugin, last);
      return false;
    }
    this.calls.delete(plugin);
    return true;
  }

  /** The plugin went: its calls are forgotten. */
  forget(plugin: string): void {
    this.calls.delete(plugin);
  }
}
