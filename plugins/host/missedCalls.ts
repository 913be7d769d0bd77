/**
 * How each plugin answers the kernel's calls, over its last ones. A turn waits on every stage's
 * handlers up to the stage timeout and on a tool up to the tool timeout, so a plugin that lets
 * calls time out (or, for stages, answers only after seconds) costs the person that much each
 * time, for as long as it runs. `limit` misses among a plugin's last `window` calls (any of its
 * handlers or tools, so spares or answers in between do not reset it) and the hub detaches what
 * it holds of that kind until it is started afresh.
 */

/** Misses among a plugin's last STAGE_CALLS_WINDOW stage calls that get its stage handlers detached. */
export const STAGE_MISSES_BEFORE_DETACH = 3;
export const STAGE_CALLS_WINDOW = 10;
/** A stage answer slower than this (half the default stage timeout) holds the person up as a timeout nearly does. */
export const SLOW_STAGE_ANSWER_MS = 2_500;
/** Timeouts among a plugin's last TOOL_CALLS_WINDOW tool calls that get its tools detached: each cost a turn a minute. */
export const TOOL_TIMEOUTS_BEFORE_DETACH = 2;
export const TOOL_CALLS_WINDOW = 10;

export class MissedCalls {
  /** Per plugin, its last calls: true where one was missed. */
  private readonly calls = new Map<string, boolean[]>();

  constructor(
    readonly limit: number,
    readonly window: number,
  ) {}

  /** Notes a call of `plugin`; whether it has now missed `limit` of its last `window` (then it starts again). */
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
