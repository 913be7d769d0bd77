/**
 * Replays every plugin supervisor's journal (one stream per plugin per boot) with the input it
 * had at that boot: enabled as the log said before the stream began, auto-restart from the
 * manifest loaded then. Timers fired as journaled messages, so the machine runs on an inert clock.
 */
import { PLUGIN_EVENT_TYPES, PLUGIN_SUPERVISOR_STREAM_PREFIX, type EventStore } from '../../events/index.ts';
import { inertClock } from '../../actors/journal/journaledActor.ts';
import { replayJournal, type ReplayDivergence } from '../../actors/journal/replayJournal.ts';
import { pluginSupervisorMachine, type PluginSupervisorConfig } from '../../machines/pluginSupervisor/index.ts';
import { emptyPluginRegistry, foldPluginRegistry } from '../../projections/plugins/pluginRegistry.ts';

export type SupervisorReplay = Readonly<{ stream: string; messages: number; divergence: ReplayDivergence | null }>;

/** `config`: the supervisor settings the daemon ran with, when not the defaults. */
export const replayPluginSupervisors = async (
  store: EventStore,
  config: Partial<PluginSupervisorConfig> = {},
): Promise<SupervisorReplay[]> => {
  const events = await store.readAll({ types: [...PLUGIN_EVENT_TYPES, 'InputDelivered'] });
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
    });
    results.push({ stream, messages: replay.messages.length, divergence: replay.divergence });
  }
  return results;
};
