/**
 * A built-in plugin: runs in the kernel's process on the same `PluginApi` a subprocess plugin
 * gets over the wire, plus the few process-local things it needs to do I/O well.
 */
import { join } from 'node:path';
import type { BackgroundWork, MachineLayout, ProbeResult, SettingsProblem, WatchedActor, WatchedEvent } from '../../actors/index.ts';
import type { Clock, RecordedEvent, Timers } from '../../events/index.ts';
import type { PluginManifest } from './manifestTypes.ts';
import type { PluginApi } from './pluginApi.ts';

/** A plugin as `homed plugins` and the cli list it. */
export type PluginSummary = Readonly<{
  name: string;
  kind: string;
  version: string;
  state: string;
  enabled: boolean;
  restarts: number;
  pid: number | null;
  tools: string[];
  stages: string[];
  channels: string[];
  /** Why its stage handlers were detached, when they were (until it is started afresh). */
  stagesDetached?: string;
  /** Why its tools were detached, the same way. */
  toolsDetached?: string;
  /** While it is not running: why it last crashed or failed to start (as the supervisor recorded it). */
  lastError?: string;
  /** Why the start would not load it (a folder of DIR/plugins; its name is the folder's). */
  refused?: string;
}>;

/** A folder the start refused, listed among the plugins so the reason is where one looks for it. */
export const refusedSummary = ({ folder, reason }: Readonly<{ folder: string; reason: string }>): PluginSummary => ({
  name: folder,
  kind: '-',
  version: '-',
  state: 'refused',
  enabled: false,
  restarts: 0,
  pid: null,
  tools: [],
  stages: [],
  channels: [],
  refused: reason,
});

export type PluginAction = 'enable' | 'disable' | 'reload' | 'start' | 'stop';

/** What a stop found: whether a task was running, how many inputs waited (now cancelled), and how many replies waited for approvals (now stopped). */
export type StopSummary = Readonly<{ running: boolean; waiting: number; parked: number }>;

/** What the built-in cli plugin may do to the kernel beyond the PluginApi: the stop button and the listings. */
export type KernelControl = Readonly<{
  /** Stops the running task, cancels what waits (the scheduler's stop) and stops the replies waiting for approval; says what there was. */
  stop(): Promise<StopSummary>;
  /**
   * Stops one input (the task a client started), not the others. @returns false when there was
   * nothing to stop (it ended, or never was): then nothing is journaled.
   */
  cancel(inputId: string): Promise<boolean>;
  /** The model sources the daemon asks, in order (for a client's banner). */
  models(): readonly Readonly<{ name: string; model: string }>[];
  tools(): readonly Readonly<{ name: string; plugin: string; description: string }>[];
  plugins(): readonly PluginSummary[];
  /** An action on plugin `name`, asked through the plugin `via` (which may not disable, stop or reload itself). */
  pluginAction(action: PluginAction, name: string, via: string): Promise<PluginSummary>;
  /** The calls waiting for a person's approval. */
  approvals(): readonly PendingApprovalSummary[];
  /** Answers one; rejects naming the waiting ones when `approval` is not among them. */
  answerApproval(answer: Readonly<{ approval: string; approved: boolean; by: string; reason?: string }>): Promise<void>;
  /** The event log, read-only: what the web UI shows (conversations, trajectories, the live log). */
  log: KernelLogView;
  /** The running machines: what the web UI's machines view draws. */
  machines: KernelMachinesView;
  /** Settings and keys as the web UI edits them (see plugins/host/settingsDesk.ts). */
  settings: KernelSettingsDesk;
  /** The memory's tiers and scenes, and a recall with scores (see plugins/host/memoryDesk.ts). */
  memory: Readonly<{
    browse(scope: string | undefined): unknown;
    recall(query: string, k: number, scope: string | undefined): Promise<unknown>;
  }>;
  /** The system at a seq, and verify, as background work that shares the daemon's thread (see plugins/host/timeTravelDesk.ts). */
  timeTravel: Readonly<{ at(seq: number, work?: BackgroundWork): Promise<unknown>; verify(work?: BackgroundWork): Promise<unknown> }>;
}>;

export type KernelSettingsDesk = Readonly<{
  /** settings.json with secret-looking values hidden, the schema's reference, the vault's names. */
  read(): Readonly<{ settings: unknown; broken?: string; reference: readonly unknown[]; secrets: readonly string[]; file: string }>;
  /** Writes the settings if they fit the schema; else the schema's problems, nothing written. */
  save(settings: unknown): Promise<Readonly<{ problems: readonly SettingsProblem[] }>>;
  setSecret(name: string, value: string, tools?: readonly string[]): void;
  probe(
    source: Readonly<{ adapter: string; baseUrl: string; model: string; apiKey?: string; apiKeySecret?: string }>,
  ): Promise<ProbeResult>;
}>;

export type KernelMachinesView = Readonly<{
  /** Each machine that ran, as a laid-out statechart (made once per machine). */
  layouts(): Promise<readonly MachineLayout[]>;
  /** Every actor's machine and current state, and the latest events between actors. */
  live(): Readonly<{ actors: readonly WatchedActor[]; events: readonly WatchedEvent[] }>;
  /** Grows with every change, so a reader sends a view only when it moved. */
  changes(): number;
}>;

/** Reads of the event log and a tail of it; nothing here can append. */
export type KernelLogView = Readonly<{
  /** Events in seq order: from `fromSeq` (inclusive), at most `maxCount`, only `types` or one `stream` when given. */
  read(
    options: Readonly<{ fromSeq?: number; toSeq?: number; maxCount: number; types?: readonly string[]; stream?: string }>,
  ): Promise<readonly RecordedEvent[]>;
  /** Seq of the newest event. */
  head(): Promise<number>;
  /** Every event after `afterSeq`, then each one appended, in batches; returns what ends it. */
  follow(afterSeq: number, onEvents: (events: readonly RecordedEvent[]) => void): () => Promise<void>;
}>;

/** A call waiting for approval, as a client lists it. */
/** A call waiting for a person; `input`, the input whose reply waits for it. */
export type PendingApprovalSummary = Readonly<{
  approval: string;
  name: string;
  callId: string;
  conversation: string;
  input?: string;
  /** The call's arguments, whole: what the person decides on (a chat line cuts them short). */
  args?: Readonly<Record<string, unknown>>;
}>;

/** The folder, in the data dir, that holds every plugin's state folder, outside `plugins/`, which the loader scans for user plugins. */
export const PLUGIN_STATE_DIR = 'state';

/** Where a plugin keeps its files, a built-in or a subprocess one (whose sandbox lets it write only there): `<dataDir>/state/<name>/`. */
export const pluginStateDir = (dataDir: string, plugin: string): string => join(dataDir, PLUGIN_STATE_DIR, plugin);

export type BuiltinEnv = Readonly<{
  /** The daemon's data dir (absolute). A built-in keeps its files under `pluginStateDir(dataDir, name)`. */
  dataDir: string;
  clock: Clock;
  /** The kernel's timers; tests pass manual ones so nothing waits on the wall clock. */
  timers: Timers;
  /** Kernel controls, given to built-in plugins (the cli uses them); never to subprocess or Lua plugins. */
  control?: KernelControl;
}>;

export type RunningPlugin = Readonly<{ stop(): Promise<void> }>;

export type BuiltinPlugin = Readonly<{
  manifest: PluginManifest;
  start(api: PluginApi, env: BuiltinEnv): Promise<RunningPlugin>;
}>;
