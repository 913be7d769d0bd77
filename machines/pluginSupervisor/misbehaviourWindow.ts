/**
 * How much of a plugin's misbehaviour is recorded: the first few complaints of a window in
 * full, the rest only counted, and the count summarised once when the window closes. Pure: the
 * caller brings the time (`at`) and arms the timer that closes the window.
 */

export type MisbehaviourConfig = Readonly<{
  /** How long a window stays open after its first complaint. */
  windowMs: number;
  /** Complaints recorded in full per window; the rest are counted. */
  recordedPerWindow: number;
}>;

export const DEFAULT_MISBEHAVIOUR_CONFIG: MisbehaviourConfig = { windowMs: 60_000, recordedPerWindow: 5 };

export type MisbehaviourWindow = Readonly<{
  openedAt: number;
  lastAt: number;
  recorded: number;
  /** Complaints counted but not recorded, by code. */
  suppressed: Readonly<Record<string, number>>;
}>;

export type MisbehaviourNote = Readonly<{
  window: MisbehaviourWindow;
  /** Record this complaint in full. */
  record: boolean;
  /** It is the last one recorded in full this window: say that the rest will be counted. */
  last: boolean;
  /** It opened the window: arm the timer that closes it. */
  opened: boolean;
}>;

export type MisbehaviourSummary = Readonly<{ suppressed: number; byCode: Readonly<Record<string, number>>; from: number; to: number }>;

/**
 * Notes one complaint.
 * @example noteMisbehaviour(null, 'UNKNOWN_NOTIFY', 0).record // true (the first of its window)
 */
export const noteMisbehaviour = (
  window: MisbehaviourWindow | null,
  code: string,
  at: number,
  config: MisbehaviourConfig = DEFAULT_MISBEHAVIOUR_CONFIG,
): MisbehaviourNote => {
  const open = window ?? { openedAt: at, lastAt: at, recorded: 0, suppressed: {} };
  const lastAt = Math.max(open.lastAt, at);
  if (open.recorded < config.recordedPerWindow) {
    const recorded = open.recorded + 1;
    return { window: { ...open, lastAt, recorded }, record: true, last: recorded === config.recordedPerWindow, opened: window === null };
  }
  const suppressed = { ...open.suppressed, [code]: (open.suppressed[code] ?? 0) + 1 };
  return { window: { ...open, lastAt, suppressed }, record: false, last: false, opened: window === null };
};

/** What a closing window summarises: null when every complaint of it was recorded in full. */
export const summariseMisbehaviour = (window: MisbehaviourWindow): MisbehaviourSummary | null => {
  const suppressed = Object.values(window.suppressed).reduce((n, count) => n + count, 0);
  return suppressed === 0 ? null : { suppressed, byCode: window.suppressed, from: window.openedAt, to: window.lastAt };
};
