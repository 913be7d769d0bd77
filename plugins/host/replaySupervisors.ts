/**
 * Replays every plugin supervisor's journal (one stream per plugin per boot) with the input it
 * had at that boot: enabled as the log said before the stream began, auto-restart from the
 * manifest loaded then. Timers fired as journaled messages, so the machine runs on an inert clock.
 */
import { PLUGIN_EVENT_TYPES, PLUGIN_SUPERVISOR_STREAM_PREFIX, type EventStore } from '../../events/index.ts';
import {
  emptyPluginRegistry,
  foldPluginRegistry,
  inertClock,
  pluginSupervisorMachine,
  replayJournal,
  type PluginSupervisorConfig,
  type ReplayDivergence,
  type Replayer,
  divergedBy,
} from '../../actors/index.ts';

export type SupervisorReplay = Readonly<{
  stream: string;
  plugin: string;
  messages: number;
  divergence: ReplayDivergence | null;
  /** The supervisor machine's state value after the replay. */
  state: unknown;
}>;

/** `config`: the supervisor settings the daemon ran with, when not the defaults. */
export const replayPluginSupervisors = async (
  store: EventStore,
  config: Partial<PluginSupervisorConfig> = {},
  /** Re-deliver only what the log held at this seq (time travel). */
  untilSeq = Number.MAX_SAFE_INTEGER,
): Promise<SupervisorReplay[]> => {
  const events = await store.readAll({ types: [...PLUGIN_EVENT_TYPES, 'InputDelivered'], toSeq: untilSeq });
  const firstSeq = new Map<string, number>();
  for (const e of events)
    if (e.stream.startsWith(PLUGIN_SUPERVISOR_STREAM_PREFIX) && !firstSeq.has(e.stream)) firstSeq.set(e.stream, e.seq);
  const results: SupervisorReplay[] = [];
  for (const [stream, seq] of firstSeq) {
    let registry = emptyPluginRegistry();
    let autoRestart = true;
    const plugin = stream.slice(PLUGIN_SUPERVISOR_STREAM_PREFIX.length, stream.lastIndexOf(':'));
    for (const e of events) {
      if (e.seq >= seq) break;
      registry = foldPluginRegistry(registry, e);
      if (e.type === 'PluginLoaded' && e.data.plugin === plugin) autoRestart = e.data.autoRestart;
    }
    const enabled = registry.plugins.get(plugin)?.enabled ?? true;
    const replay = await replayJournal({
      store,
      stream,
      logic: pluginSupervisorMachine,
      input: { plugin, enabled, config: { ...config, autoRestart } },
      clock: inertClock,
      untilSeq,
    });
    results.push({ stream, plugin, messages: replay.messages.length, divergence: replay.divergence, state: replay.snapshot.value });
  }
  return results;
};

/** The plugin supervisors' journals, for `homed replay --verify`. */
export const supervisorsReplayer: Replayer = {
  name: 'plugin supervisors',
  replay: async (store, _settings, untilSeq) => {
    const replays = await replayPluginSupervisors(store, {}, untilSeq);
    // Each plugin's supervisor of the latest boot then: those of earlier boots are over.
    const latest = new Map(replays.map((r) => [r.plugin, r]));
    return {
      name: 'plugin supervisors',
      verdicts: replays.map((r) => ({ journal: r.stream, divergence: r.divergence })),
      messages: replays.reduce((n, r) => n + r.messages, 0),
      actors: [...latest.values()].map((r) => ({
        actor: r.stream,
        machine: 'pluginSupervisor',
        state: r.state,
        messages: r.messages,
        diverged: divergedBy(r.divergence, untilSeq),
      })),
    };
  },
};
