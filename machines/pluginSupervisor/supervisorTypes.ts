/** The plugin supervisor's vocabulary: its configuration, the messages it takes and the facts it emits. */
import type { EventNamed } from '../../events/index.ts';

export type PluginSupervisorConfig = Readonly<{
  /** Restart after a crash; when off a crash ends in `stopped`. */
  autoRestart: boolean;
  /** Crashes this close together count toward giving up. */
  crashWindowMs: number;
  /** The crash within the window that makes the supervisor give up. */
  crashLimit: number;
  /** Wait before the restart after the 1st, 2nd, 3rd … crash of the window. */
  backoffMs: readonly number[];
  /** Running continuously this long forgets the crash history. */
  stableUptimeMs: number;
}>;

export const DEFAULT_PLUGIN_SUPERVISOR_CONFIG: PluginSupervisorConfig = {
  autoRestart: true,
  crashWindowMs: 300_000,
  crashLimit: 4,
  backoffMs: [1_000, 2_000, 3_000],
  stableUptimeMs: 60_000,
};

/** Messages the supervisor takes, each with the time it happened (`at`, ms). */
export type PluginSupervisorMessage =
  | Readonly<{ type: 'START'; at: number }>
  | Readonly<{ type: 'STOP'; at: number }>
  | Readonly<{ type: 'ENABLE'; at: number }>
  | Readonly<{ type: 'DISABLE'; at: number }>
  /** The process finished its handshake. */
  | Readonly<{ type: 'PROCESS_READY'; at: number }>
  /** The process exited (asked to or not). */
  | Readonly<{ type: 'PROCESS_EXITED'; at: number; exitCode: number | null; signal: string | null }>
  /** Spawn or handshake failed, or the transport broke. */
  | Readonly<{ type: 'PROCESS_CRASHED'; at: number; error: string; exitCode?: number | null; signal?: string | null }>
  /** The start failed in a way no retry fixes (a protocol version, a name the manifest does not give): `error` says what to fix. */
  | Readonly<{ type: 'START_REFUSED'; at: number; error: string }>;

export type PluginStopReason = 'requested' | 'disabled' | 'crashed' | 'refused';

/** Facts the supervisor emits for the log (declared in the event catalog). */
export type PluginSupervisorFact = EventNamed<
  | 'PluginStarting'
  | 'PluginStarted'
  | 'PluginCrashed'
  | 'PluginRestarting'
  | 'PluginGaveUp'
  | 'PluginStopped'
  | 'PluginCrashHistoryCleared'
  | 'PluginEnabled'
  | 'PluginDisabled'
>;

export type PluginSupervisorContext = Readonly<{
  plugin: string;
  config: PluginSupervisorConfig;
  enabled: boolean;
  /** Latest time the supervisor acted on; time never goes back. */
  now: number;
  /** Crash times of the current window, ascending. */
  crashTimes: readonly number[];
  /** When the process became ready, while running. */
  runningSince: number | null;
  /** 0 for a start a person asked for, n for the n-th restart of the window. */
  attempt: number;
  /** The pending restart's wait and due time, while in backoff. */
  restartDelayMs: number;
  restartAt: number | null;
  stopReason: PluginStopReason;
}>;

export type PluginSupervisorInput = Readonly<{
  plugin: string;
  enabled?: boolean;
  config?: Partial<PluginSupervisorConfig>;
}>;
