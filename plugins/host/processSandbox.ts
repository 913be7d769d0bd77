/**
 * The sandbox a subprocess plugin's process runs in, below what the tool proxy can see: its own
 * mount namespace (as the same user) in which the daemon's own files are hidden (the vault
 * behind an empty tmpfs, settings and the log behind /dev/null), and, unless its manifest asks
 * for the `network` capability, its own network namespace, where no address is reachable,
 * loopback included. `security.sandbox.plugins`: `isolate` (the default: when this machine
 * cannot, plugins run as they are and the start says so), `require` (then they do not start),
 * `off`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HologramError } from '../../events/index.ts';

export type PluginSandboxMode = 'isolate' | 'require' | 'off';

export const PLUGIN_SANDBOX_MODES: readonly PluginSandboxMode[] = ['isolate', 'require', 'off'];

/** Whether plugins can be sandboxed here, or why not. */
export type SandboxSupport = Readonly<{ kind: 'available' }> | Readonly<{ kind: 'unavailable'; why: string }> | Readonly<{ kind: 'off' }>;

/** What a plugin must not see: directories hidden behind an empty tmpfs, files behind /dev/null. */
export type HiddenPaths = Readonly<{ dirs: readonly string[]; files: readonly string[] }>;

export class PluginSandboxUnavailable extends HologramError {
  readonly code = 'PLUGIN_SANDBOX_UNAVAILABLE';
  constructor(plugin: string, why: string) {
    super(
      `plugin '${plugin}' was not started: security.sandbox.plugins is "require" and this machine cannot sandbox its process (${why}); ` +
        'set security.sandbox.plugins to "isolate" to run plugins without a sandbox here',
    );
  }
}

/** Mounts what is hidden, then becomes the plugin: `sh -c SCRIPT sh <n> dirs… <m> files… command args…`. */
const SCRIPT = [
  'n=$1; shift; while [ "$n" -gt 0 ]; do mount -t tmpfs -o size=4k,mode=0700 hologram-hidden "$1" || exit 126; shift; n=$((n-1)); done',
  'm=$1; shift; while [ "$m" -gt 0 ]; do mount --bind /dev/null "$1" || exit 126; shift; m=$((m-1)); done',
  // The shell's own variables are not the plugin's: it gets exactly the environment it was given.
  'unset PWD OLDPWD SHLVL',
  'exec "$@"',
].join('\n');

const unshareArgs = (network: boolean): string[] => ['--map-current-user', '--mount', ...(network ? [] : ['--net']), '--'];

const wrapped = (network: boolean, hidden: HiddenPaths, command: string, args: readonly string[]): string[] => {
  const dirs = hidden.dirs.filter((d) => existsSync(d));
  const files = hidden.files.filter((f) => existsSync(f));
  return [...unshareArgs(network), '/bin/sh', '-c', SCRIPT, 'sh', `${dirs.length}`, ...dirs, `${files.length}`, ...files, command, ...args];
};

/** Whether this machine lets a process have its own network and mount namespaces and mount in them (asked once per daemon). */
export const probeSandbox = (mode: PluginSandboxMode): SandboxSupport => {
  if (mode === 'off') return { kind: 'off' };
  const dir = mkdtempSync(join(tmpdir(), 'hologram-sandbox-probe-'));
  try {
    const probe = spawnSync('unshare', wrapped(false, { dirs: [dir], files: [] }, 'true', []), { stdio: 'ignore', timeout: 5_000 });
    if (probe.error) return { kind: 'unavailable', why: `unshare could not run: ${probe.error.message}` };
    if (probe.status !== 0) return { kind: 'unavailable', why: 'user, mount or network namespaces are refused here' };
    return { kind: 'available' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/**
 * The command that starts a plugin: in its sandbox (with the network when it asked for it), or,
 * when sandboxing is off or unavailable, as it is (`isolate`) or not at all (`require`).
 * @throws PluginSandboxUnavailable in mode `require` when this machine cannot sandbox it
 */
export const sandboxedCommand = (
  plugin: string,
  wantsNetwork: boolean,
  mode: PluginSandboxMode,
  support: SandboxSupport,
  hidden: HiddenPaths,
  command: Readonly<{ command: string; args: readonly string[] }>,
): Readonly<{ command: string; args: string[] }> => {
  if (support.kind === 'available') return { command: 'unshare', args: wrapped(wantsNetwork, hidden, command.command, command.args) };
  if (support.kind === 'unavailable' && mode === 'require') throw new PluginSandboxUnavailable(plugin, support.why);
  return { command: command.command, args: [...command.args] };
};
