/**
 * Taking the network from a subprocess plugin: a plugin whose manifest does not ask for the
 * `network` capability runs in a network namespace of its own (`unshare --net`, as the same
 * user), where no address, loopback included, can be reached. `security.sandbox.pluginNetwork`:
 * `isolate` (the default: isolate when this machine can, and say once when it cannot),
 * `require` (a plugin that cannot be isolated does not start), `off`.
 */
import { spawnSync } from 'node:child_process';
import { HologramError } from '../../events/index.ts';

export type PluginNetworkMode = 'isolate' | 'require' | 'off';

export const PLUGIN_NETWORK_MODES: readonly PluginNetworkMode[] = ['isolate', 'require', 'off'];

/** How a plugin's command is wrapped to run without network, or why it cannot be. */
export type NetworkIsolation =
  | Readonly<{ kind: 'wrap'; command: string; args: readonly string[] }>
  | Readonly<{ kind: 'unavailable'; why: string }>
  | Readonly<{ kind: 'off' }>;

export class PluginNetworkUnavailable extends HologramError {
  readonly code = 'PLUGIN_NETWORK_UNAVAILABLE';
  constructor(plugin: string, why: string) {
    super(
      `plugin '${plugin}' was not started: security.sandbox.pluginNetwork is "require" and this machine cannot take its network away (${why}); ` +
        'add "network" to its capabilities if it needs the network, or set pluginNetwork to "isolate"',
    );
  }
}

const UNSHARE = ['--map-current-user', '--net'] as const;

/** Whether `unshare` can give a process a network namespace of its own here (asked once per daemon). */
export const probeIsolation = (mode: PluginNetworkMode): NetworkIsolation => {
  if (mode === 'off') return { kind: 'off' };
  const probe = spawnSync('unshare', [...UNSHARE, 'true'], { stdio: 'ignore', timeout: 5_000 });
  if (probe.error) return { kind: 'unavailable', why: `unshare could not run: ${probe.error.message}` };
  if (probe.status !== 0)
    return { kind: 'unavailable', why: 'unshare --map-current-user --net was refused (user namespaces are off here)' };
  return { kind: 'wrap', command: 'unshare', args: [...UNSHARE, '--'] };
};

/**
 * The command that starts a plugin: as it is for one granted `network` or when isolation is off,
 * else wrapped; when isolation is unavailable, as it is (mode `isolate`) or not at all (`require`).
 * @throws PluginNetworkUnavailable in mode `require` when the plugin cannot be isolated
 */
export const isolatedCommand = (
  plugin: string,
  wantsNetwork: boolean,
  mode: PluginNetworkMode,
  isolation: NetworkIsolation,
  command: Readonly<{ command: string; args: readonly string[] }>,
): Readonly<{ command: string; args: string[] }> => {
  if (wantsNetwork || isolation.kind === 'off') return { command: command.command, args: [...command.args] };
  if (isolation.kind === 'unavailable') {
    if (mode === 'require') throw new PluginNetworkUnavailable(plugin, isolation.why);
    return { command: command.command, args: [...command.args] };
  }
  return { command: isolation.command, args: [...isolation.args, command.command, ...command.args] };
};
