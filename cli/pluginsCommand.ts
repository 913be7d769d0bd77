/**
 * `homed plugins`: lists the plugins with their state, restarts and registrations (from the
 * running daemon, or from the log when none runs), and enables, disables, reloads, starts or
 * stops one in the running daemon.
 */
import { join } from 'node:path';
import { emptyPluginRegistry, foldPluginRegistry, holdingsOf } from '../projections/plugins/pluginRegistry.ts';
import { type PluginSummary, refusedSummary } from '../plugins/sdk/builtinPlugin.ts';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { DaemonNotRunning } from './daemonErrors.ts';
import { UsageError } from './cliErrors.ts';
import { HologramError } from '../events/errors.ts';
import { dataDirFrom, EVENT_LOG_FILE, existingLogPath, openEventLog } from './dataDir.ts';
import { PLUGIN_EVENT_TYPES } from '../events/index.ts';
import { formatPlugins } from './listings.ts';
import { oneVisibleLine } from '../events/visibleControls.ts';

export const PLUGINS_HELP = `Usage: homed plugins [--data DIR]
       homed plugins enable|disable|reload|start|stop NAME [--data DIR]

Lists the plugins: kind, state, restarts, pid, and the tools, stages and channels each holds.
With a running daemon the list is live; otherwise it is what the log last recorded.
The actions need a running daemon (they talk to its cli socket):
  enable NAME / disable NAME   turn a plugin on or off; it stays so across restarts
  reload NAME                  stop it and start it again (after editing its code; a change to
                               its plugin.json is read at homed's next start)
  start NAME / stop NAME       start or stop it once (a gave-up plugin is started fresh)
An action says what was asked, then the plugin as it is now (its state, pid and holdings);
when enable, start or reload left it not running, it says why and exits 1.`;

const ACTIONS = ['enable', 'disable', 'reload', 'start', 'stop'] as const;

/** The plugins as the log last recorded them, for when homed is not running (no process, so no pid). */
const fromLog = async (dataDir: string): Promise<PluginSummary[]> => {
  const store = openEventLog(existingLogPath(dataDir));
  try {
    let registry = emptyPluginRegistry();
    for (const event of await store.readAll({ types: PLUGIN_EVENT_TYPES })) registry = foldPluginRegistry(registry, event);
    const loaded = [...registry.plugins.values()].map((p) => ({
      name: p.name,
      kind: p.kind,
      version: p.version,
      state: p.state,
      enabled: p.enabled,
      restarts: p.restarts,
      pid: null,
      ...holdingsOf(registry, p.name),
    }));
    return [...loaded, ...registry.refused.map(refusedSummary)];
  } finally {
    await store.close();
  }
};

export const pluginsCommand = async (argv: string[], write: (line: string) => void): Promise<number> => {
  const { values, positionals } = parse(argv, { data: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
  if (values.help) {
    write(PLUGINS_HELP);
    return 0;
  }
  const dataDir = dataDirFrom(values.data);
  const [action, name, ...extra] = positionals;
  if (action === undefined || action === 'list') {
    let client: CliClient;
    try {
      client = await CliClient.connect(dataDir);
    } catch (error) {
      if (!(error instanceof DaemonNotRunning)) throw error;
      const plugins = await fromLog(dataDir);
      write(`homed is not running on ${dataDir}; as last recorded in ${join(dataDir, EVENT_LOG_FILE)}:`);
      write(plugins.length ? formatPlugins(plugins).trimEnd() : 'no plugin was ever loaded');
      return 0;
    }
    try {
      write(formatPlugins((await client.ask({ type: 'plugins' }, replyOfType('plugins'))).plugins).trimEnd());
    } finally {
      client.close();
    }
    return 0;
  }
  if (!(ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`unknown plugins action '${action}'; use list, ${ACTIONS.join(', ')}`);
  if (!name || extra.length) throw new UsageError(`'homed plugins ${action}' needs exactly one plugin name`);
  const client = await CliClient.connect(dataDir);
  try {
    const asked = action as (typeof ACTIONS)[number];
    const { plugin } = await client.ask({ type: 'plugin', action: asked, name }, replyOfType('plugin'));
    // What was asked, not what happened: the row says that (a disabled plugin is not reloaded).
    write(`asked homed to ${asked} ${name}; it is now:`);
    write(formatPlugins([plugin]).trimEnd());
    const missed = missedAction(asked, plugin);
    if (missed) throw new PluginActionMissed(missed);
  } finally {
    client.close();
  }
  return 0;
};

/** A plugin action that did not bring the plugin where it asks (it is said on stderr, exit 1). */
export class PluginActionMissed extends HologramError {
  readonly code = 'PLUGIN_ACTION_MISSED';
}

/** Why `action` left `plugin` other than it asks, or undefined when it is as asked. */
const missedAction = (action: (typeof ACTIONS)[number], plugin: PluginSummary): string | undefined => {
  const running = action === 'enable' || action === 'start' || action === 'reload';
  if (!running || plugin.state === 'running') return undefined;
  if (!plugin.enabled)
    return `${plugin.name} is disabled, so it was not started; 'homed plugins enable ${plugin.name}' enables and starts it`;
  const state = STATE_SAID[plugin.state] ?? `it is ${plugin.state}`;
  // Its last failure in full, which the row above cuts short: what to fix, and what to run then.
  if (plugin.lastError) return `${plugin.name} did not stay running (${state}): ${oneVisibleLine(plugin.lastError, 2_000, 300)}`;
  return `${plugin.name} did not stay running (${state}); 'homed log --type PluginStopped --type PluginCrashed' says why`;
};

/** A plugin's state as a person reads it, where the name alone does not say it. */
const STATE_SAID: Readonly<Record<string, string>> = {
  backoff: 'it crashed and waits to be started again',
  gaveUp: 'it crashed too often and homed gave up on it',
  stopped: 'homed could not start it, or it stopped',
};
