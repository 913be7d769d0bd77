/**
 * The open misbehaviour window of each plugin, and the timer (on the kernel's timers) that
 * closes it. Decides nothing itself: `noteMisbehaviour` says what to record; this keeps the
 * windows and hands back a window's summary when it closes. A complaint noted `once` (a flood,
 * which refuses each of its parts) is recorded the first time in a window, then only counted.
 */
import type { Timers } from '../../events/index.ts';
import {
  DEFAULT_MISBEHAVIOUR_CONFIG,
  noteMisbehaviour,
  summariseMisbehaviour,
  type MisbehaviourConfig,
  type MisbehaviourWindow,
} from '../../actors/index.ts';

export type MisbehaviourSummary = NonNullable<ReturnType<typeof summariseMisbehaviour>>;

export class MisbehaviourWindows {
  readonly config: MisbehaviourConfig;
  private readonly open = new Map<string, { window: MisbehaviourWindow; timer: unknown; once: ReadonlySet<string> }>();

  /** `onExpired`: a window's time is up (close it). Without timers a window closes only when told. */
  constructor(
    private readonly timers: Timers | undefined,
    private readonly onExpired: (plugin: string) => void,
    config: Partial<MisbehaviourConfig> = {},
  ) {
    this.config = { ...DEFAULT_MISBEHAVIOUR_CONFIG, ...config };
  }

  /**
   * Notes a complaint at `at`; says whether to record it, and whether it is the last recorded in
   * full. `once`: a code already noted in this window is counted as if the window were full.
   */
  note(plugin: string, code: string, at: number, { once = false }: { once?: boolean } = {}): { record: boolean; last: boolean } {
    const open = this.open.get(plugin);
    const seen = open?.once ?? new Set<string>();
    const repeat = once && seen.has(code);
    const note = noteMisbehaviour(open?.window ?? null, code, at, repeat ? { ...this.config, recordedPerWindow: 0 } : this.config);
    const timer = note.opened ? this.timers?.setTimer(() => this.onExpired(plugin), this.config.windowMs) : open?.timer;
    this.open.set(plugin, { window: note.window, timer, once: once && !repeat ? new Set([...seen, code]) : seen });
    return { record: note.record, last: note.last };
  }

  /** Closes the plugin's window; what it only counted, if anything. */
  close(plugin: string): MisbehaviourSummary | null {
    const open = this.open.get(plugin);
    if (!open) return null;
    this.open.delete(plugin);
    if (open.timer !== undefined) this.timers?.clearTimer(open.timer);
    return summariseMisbehaviour(open.window);
  }

  get plugins(): readonly string[] {
    return [...this.open.keys()];
  }
}
