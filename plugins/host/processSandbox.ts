/**
 * The sandbox a subprocess plugin's process runs in, below what the tool proxy can see: its own
 * mount namespace (as the same user) in which the whole data dir is behind an empty tmpfs but
 * for the plugin's own folder, mounts it gets locked from a namespace above its own (so a file
 * the daemon writes later, or replaces by renaming a new one over it, is hidden as well as those
 * there at the start); the user's home directory behind an empty tmpfs too, but for the folders
 * the plugin needs to run (its own, the daemon's install and Node's) unless its manifest asks for
 * the `home` capability; where the machine allows, a PID namespace whose end (with the plugin, or
 * the daemon) ends every process it started, a detached one included, with a /proc of its own
 * (it sees its own processes, not the machine's and their command lines); and, unless its manifest
 * asks for the `network` capability, its own network namespace, where no address is reachable,
 * loopback included. `security.sandbox.plugins`: `isolate` (the default: when this machine
 * cannot, plugins run as they are and the start says so), `require` (then they do not start),
 * `off`.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isUnder } from '../../actors/index.ts';
import { HologramError } from '../../events/index.ts';

export type PluginSandboxMode = 'isolate' | 'require' | 'off';

export const PLUGIN_SANDBOX_MODES: readonly PluginSandboxMode[] = ['isolate', 'require', 'off'];

/**
 * Whether plugins can be sandboxed here, or why not. Available, what may be missing (the rest of
 * the sandbox holds): `unconfined`, why a plugin's processes cannot be kept to a PID namespace of
 * their own here; `sharedProc`, why, in one, they cannot have a /proc of their own; `sharedHome`,
 * why the user's home directory cannot be hidden.
 */
export type SandboxSupport =
  | Readonly<{ kind: 'available'; unconfined?: string; sharedProc?: string; sharedHome?: string }>
  | Readonly<{ kind: 'unavailable'; why: string }>
  | Readonly<{ kind: 'off' }>;

/** How far a plugin's processes are kept to themselves: a PID namespace and its own /proc, a PID namespace only, or neither. */
type Confinement = 'private' | 'pid' | 'none';

const confinementOf = (support: Readonly<{ unconfined?: string; sharedProc?: string }>): Confinement =>
  support.unconfined !== undefined ? 'none' : support.sharedProc !== undefined ? 'pid' : 'private';

/** What `require` mode finds missing from an available sandbox, if anything. */
const missingFrom = (support: Readonly<{ unconfined?: string; sharedProc?: string; sharedHome?: string }>): string | undefined =>
  support.unconfined ?? support.sharedProc ?? support.sharedHome;

/**
 * What a plugin must not see: the data dir (its real path), all of it but the plugin's own
 * folder, which is one of `pluginsDir` when it is in there; and `home`, the user's home directory
 * (its real path), all of it but the plugin's own folder and the folders in it that `kept` lists
 * (what a plugin needs to run: the daemon's install, Node's).
 */
export type HiddenPaths = Readonly<{ dataDir: string; pluginsDir: string; home?: HiddenHome }>;

export type HiddenHome = Readonly<{ path: string; kept: readonly string[] }>;

/** How many folders of a hidden home a plugin may be given back besides its own. */
export const MOST_KEPT = 2;

/** The plugin's own folder: its path as the host found it (in the data dir, maybe a link) and where that leads. */
export type OwnFolder = Readonly<{ path: string; real: string }>;

/** A plugin folder that leads into the data dir but not to a folder of DIR/plugins: given back, it would show the plugin what the sandbox hides. */
export class PluginFolderOutOfPlace extends HologramError {
  readonly code = 'PLUGIN_FOLDER_OUT_OF_PLACE';
  constructor(plugin: string, folder: string, real: string) {
    super(
      `plugin '${plugin}' was not started: its folder ${folder} leads to ${real}, a part of the data dir that is not a plugin's folder; ` +
        'a plugin folder is a folder of DIR/plugins, or a link to one outside the data dir',
    );
  }
}

export class PluginSandboxUnavailable extends HologramError {
  readonly code = 'PLUGIN_SANDBOX_UNAVAILABLE';
  constructor(plugin: string, why: string) {
    super(
      `plugin '${plugin}' was not started: security.sandbox.plugins is "require" and this machine cannot sandbox its process wholly (${why}); ` +
        'set security.sandbox.plugins to "isolate" to run plugins with as much of the sandbox as this machine allows',
    );
  }
}

/**
 * Where the sandbox's own programs are run from: the system's folders, never PATH, where a folder
 * the daemon's user may write (~/.local/bin, a project's node_modules/.bin) would let a plugin
 * put its own `unshare` to be run outside the sandbox at its next start. One that is in none of
 * them is named in /usr/bin, where its start fails and says so.
 */
const SYSTEM_FOLDERS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

const systemProgram = (name: string): string => {
  for (const folder of SYSTEM_FOLDERS) {
    try {
      accessSync(join(folder, name), constants.X_OK);
      return join(folder, name);
    } catch {
      // not in this folder: the next
    }
  }
  return join(SYSTEM_FOLDERS[0]!, name);
};

const UNSHARE = systemProgram('unshare');
const SETPRIV = systemProgram('setpriv');
const MOUNT = systemProgram('mount');
const MKDIR = systemProgram('mkdir');
const LN = systemProgram('ln');
const DIRNAME = systemProgram('dirname');

/**
 * Hides the home directory but for the folders kept, then the data dir, gives the plugin its own
 * folder back, then becomes the plugin: `sh -c SCRIPT sh DATA OWN REAL HOME KEEP1 KEEP2 command
 * args…` (HOME and each KEEP empty when there is none). Each folder given back is held open
 * across the mount and bound back from that descriptor (`-c`: mount would otherwise resolve it to
 * the path, now hidden); a folder reached through a link in the data dir gets the link again.
 * The kept folders come back before the data dir is hidden, so none of them shows it.
 */
const scriptOf = (confinement: Confinement): string =>
  [
    'data=$1; own=$2; real=$3; home=$4; keep1=$5; keep2=$6; shift 6',
    'inside=; case "$real/" in "$data"/*) [ -n "$data" ] && inside=1;; esac',
    'case "$real/" in "$home"/*) [ -n "$home" ] && inside=1;; esac',
    'if [ -n "$inside" ]; then exec 3<"$real" || exit 126; fi',
    'if [ -n "$keep1" ]; then exec 4<"$keep1" || exit 126; fi',
    'if [ -n "$keep2" ]; then exec 5<"$keep2" || exit 126; fi',
    `if [ -n "$home" ]; then ${MOUNT} -t tmpfs -o size=1m,mode=0755 hologram-home "$home" || exit 126; fi`,
    `if [ -n "$keep1" ]; then ${MKDIR} -p "$keep1" && ${MOUNT} -c --bind /proc/self/fd/4 "$keep1" || exit 126; exec 4<&-; fi`,
    `if [ -n "$keep2" ]; then ${MKDIR} -p "$keep2" && ${MOUNT} -c --bind /proc/self/fd/5 "$keep2" || exit 126; exec 5<&-; fi`,
    `if [ -n "$data" ]; then ${MKDIR} -p "$data" && ${MOUNT} -t tmpfs -o size=64k,mode=0700 hologram-hidden "$data" || exit 126; fi`,
    `if [ -n "$inside" ]; then ${MKDIR} -p "$real" && ${MOUNT} -c --bind /proc/self/fd/3 "$real" || exit 126; exec 3<&-; fi`,
    `case "$own" in "$data"/*) if [ -n "$data" ] && [ "$own" != "$real" ]; then ${MKDIR} -p "$(${DIRNAME} "$own")" && ${LN} -s "$real" "$own" || exit 126; fi;; esac`,
    'cd "$real" || exit 126',
    // The shell's own variables are not the plugin's: it gets exactly the environment it was given.
    'unset PWD OLDPWD SHLVL',
    // A user namespace of its own inside this one: the mounts above come to it locked (no umount
    // lays the data dir bare, even for a daemon run as root), and exec leaves it no capability
    // here unless it is root in it. Confined, a PID namespace too, whose first process is INIT:
    // whatever the plugin starts, in a session of its own too, ends with it (`--kill-child`: and
    // with this process, which ends with the daemon, `--pdeathsig`, whether or not the plugin
    // leaves when its stdin closes). `--mount-proc`: a /proc that lists the namespace's processes only.
    confinement === 'none'
      ? `exec ${UNSHARE} --user --map-current-user --mount -- "$@"`
      : `exec ${SETPRIV} --pdeathsig KILL -- ${UNSHARE} --user --map-current-user --mount --pid --fork --kill-child${confinement === 'private' ? ' --mount-proc' : ''} -- /bin/sh -c '${INIT}' hologram-init "$@"`,
  ].join('\n');

/**
 * The first process of a plugin's PID namespace, so that the plugin is not: it reaps what the
 * plugin's programs leave behind (a first process must, or their zombies pile up), lets a signal
 * the plugin sends itself end it (the first process ignores those it has no handler for), and
 * passes on the TERM, INT and HUP it gets. It ends with the plugin, with its code, or 128 + the
 * signal that ended it (as a shell reports one). The plugin keeps the stdin the kernel gave (an
 * asynchronous command's is otherwise /dev/null), and runs in a user namespace of its own again,
 * so the /proc mounted for the namespace comes to it locked like the rest (a plugin of a daemon
 * run as root could otherwise unmount it and see the machine's). No single quote: it is quoted into SCRIPT.
 */
const INIT = [
  'unset PWD OLDPWD SHLVL',
  'exec 3<&0',
  `${UNSHARE} --user --map-current-user --mount -- "$@" 0<&3 3<&- &`,
  'child=$!',
  'exec 3<&- 0</dev/null',
  ...['TERM', 'INT', 'HUP'].map((signal) => `trap "kill -${signal} $child 2>/dev/null" ${signal}`),
  'while :; do wait "$child"; status=$?; kill -0 "$child" 2>/dev/null || break; done',
  'exit "$status"',
].join('\n');

/** `--keep-caps`: the shell keeps the capabilities of its new user namespace across exec, so it may mount as any user. */
const unshareArgs = (network: boolean): string[] => ['--map-current-user', '--keep-caps', '--mount', ...(network ? [] : ['--net']), '--'];

const wrapped = (
  network: boolean,
  confinement: Confinement,
  hidden: HiddenPaths | undefined,
  own: OwnFolder,
  command: string,
  args: readonly string[],
): string[] => [
  ...unshareArgs(network),
  '/bin/sh',
  '-c',
  scriptOf(confinement),
  'sh',
  hidden?.dataDir ?? '',
  own.path,
  own.real,
  hidden?.home?.path ?? '',
  ...Array.from({ length: MOST_KEPT }, (_, i) => hidden?.home?.kept[i] ?? ''),
  command,
  ...args,
];

/** The user's home directory (its real path), unless there is none to hide: unset, not a folder, or the root. */
export const userHome = (): string | undefined => {
  try {
    const home = realpathSync(homedir());
    return home !== '/' && statSync(home).isDirectory() ? home : undefined;
  } catch {
    return undefined;
  }
};

const realOrSelf = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * The user's home directory (`userHome()`) as a plugin must not see it, but for the folders of `needed` in it
 * (one inside another kept with it); undefined when there is no home to hide, or when a folder a
 * plugin needs holds all of it.
 */
export const hiddenHome = (needed: readonly string[], home: string | undefined): HiddenHome | undefined => {
  if (home === undefined) return undefined;
  const real = [...new Set(needed.map(realOrSelf))];
  if (real.some((folder) => isUnder(home, folder))) return undefined;
  const inside = real.filter((folder) => isUnder(folder, home));
  const kept = inside.filter((folder) => !inside.some((other) => other !== folder && isUnder(folder, other)));
  return kept.length <= MOST_KEPT ? { path: home, kept } : undefined;
};

/** The folder of the daemon's own package (its package.json's), which a plugin runs from (the SDK, tsx for TypeScript entries). */
export const installRoot = (): string => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return dirname(fileURLToPath(import.meta.url));
};

/** The folders a plugin needs to run from: the daemon's install and Node's (its prefix, as a version manager installs it). */
export const runtimeFolders = (): string[] => [installRoot(), dirname(dirname(process.execPath))];

/**
 * Whether this machine lets a process have its own network and mount namespaces and mount in
 * them, and its own PID namespace with a /proc of its own (asked once per daemon): without the
 * last, plugins are still sandboxed, but see the machine's processes; without a PID namespace,
 * what they start may outlive them too. With all of it, whether the user's home can be hidden.
 */
export const probeSandbox = (mode: PluginSandboxMode): SandboxSupport => {
  if (mode === 'off') return { kind: 'off' };
  const dir = mkdtempSync(join(tmpdir(), 'hologram-sandbox-probe-'));
  try {
    const own = join(dir, 'plugin');
    mkdirSync(own);
    const probe = (confinement: Confinement, home?: HiddenHome) =>
      spawnSync(UNSHARE, wrapped(false, confinement, { dataDir: dir, pluginsDir: dir, home }, { path: own, real: own }, 'true', []), {
        stdio: 'ignore',
        timeout: 5_000,
      });
    const home = userHome();
    const sharedHome = "the user's home directory cannot be hidden here, so plugins see it";
    if (probe('private').status === 0) {
      return home === undefined || probe('private', { path: home, kept: [] }).status === 0
        ? { kind: 'available' }
        : { kind: 'available', sharedHome };
    }
    const sharedProc = "a /proc of their own cannot be mounted here, so plugins see the machine's processes";
    if (probe('pid').status === 0) return { kind: 'available', sharedProc };
    const unconfined = probe('none');
    if (unconfined.error) return { kind: 'unavailable', why: `unshare could not run: ${unconfined.error.message}` };
    if (unconfined.status !== 0) return { kind: 'unavailable', why: 'user, mount or network namespaces are refused here' };
    return {
      kind: 'available',
      unconfined:
        "a PID namespace (or setpriv, of util-linux) is not to be had here, so what plugins start may outlive them and they see the machine's processes",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/**
 * The command that starts a plugin: in its sandbox (with the network, or the home directory, when
 * it asked for it: its manifest's capabilities), or,
 * when sandboxing is off or unavailable, as it is (`isolate`) or not at all (`require`, which
 * also refuses a sandbox missing a part).
 * @throws PluginSandboxUnavailable in mode `require` when this machine cannot sandbox it wholly
 */
export const sandboxedCommand = (
  plugin: string,
  wants: Readonly<{ network: boolean; home: boolean }>,
  mode: PluginSandboxMode,
  support: SandboxSupport,
  hidden: HiddenPaths | undefined,
  own: OwnFolder,
  command: Readonly<{ command: string; args: readonly string[] }>,
): Readonly<{ command: string; args: string[] }> => {
  const aPluginsFolder = hidden !== undefined && own.real !== hidden.pluginsDir && isUnder(own.real, hidden.pluginsDir);
  if (hidden && isUnder(own.real, hidden.dataDir) && !aPluginsFolder) {
    throw new PluginFolderOutOfPlace(plugin, own.path, own.real);
  }
  if (support.kind === 'available') {
    const missing = missingFrom(support);
    if (missing !== undefined && mode === 'require') throw new PluginSandboxUnavailable(plugin, missing);
    const shown =
      hidden && (support.sharedHome !== undefined || wants.home) ? { dataDir: hidden.dataDir, pluginsDir: hidden.pluginsDir } : hidden;
    return { command: UNSHARE, args: wrapped(wants.network, confinementOf(support), shown, own, command.command, command.args) };
  }
  if (support.kind === 'unavailable' && mode === 'require') throw new PluginSandboxUnavailable(plugin, support.why);
  return { command: command.command, args: [...command.args] };
};
