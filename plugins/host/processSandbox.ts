/**
 * The sandbox a subprocess plugin's process runs in, below what the tool proxy can see: its own
 * mount namespace (as the same user) in which the whole data dir is behind an empty tmpfs but
 * for the plugin's own folder, mounts it gets locked from a namespace above its own (so a file
 * the daemon writes later, or replaces by renaming a new one over it, is hidden as well as those
 * there at the start); the user's private folders (privateFolders.ts: the home, unless its
 * manifest asks for the `home` capability, /tmp…) behind an empty tmpfs too, but for its own
 * folder and the folders it runs from, read-only wherever they are; every other folder of the
 * machine read-only, so it writes only its own folder and its empty private ones; IPC of its own; where the
 * machine allows, a PID namespace whose end (with the plugin, or the daemon) ends every process
 * it started, a detached one included, with a /proc of its own (it sees its own processes, not
 * the machine's and their command lines); and, unless its manifest
 * asks for the `network` capability, its own network namespace, where no address is reachable,
 * loopback included. `security.sandbox.plugins`: `isolate` (the default: when this machine
 * cannot, plugins run as they are and the start says so), `require` (then they do not start),
 * `off`.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { isUnder } from '../../actors/index.ts';
import { HologramError } from '../../events/index.ts';
import { MANIFEST_FILE } from './manifest.ts';
import { outermost, type PrivateFolders, realOrSelf, runtimeFolders } from './privateFolders.ts';

export type PluginSandboxMode = 'isolate' | 'require' | 'off';

export const PLUGIN_SANDBOX_MODES: readonly PluginSandboxMode[] = ['isolate', 'require', 'off'];

/**
 * Whether plugins can be sandboxed here, or why not. Available, what may be missing (the rest of
 * the sandbox holds): `unconfined`, why a plugin's processes cannot be kept to a PID namespace of
 * their own here; `sharedProc`, why, in one, they cannot have a /proc of their own;
 * `sharedFolders`, why the user's private folders (the home, /tmp…) cannot be hidden; `writable`,
 * why the machine's folders cannot be made read-only to them; `root`, that the daemon runs as
 * root, and so do its plugins.
 */
export type SandboxSupport =
  | Readonly<{
      kind: 'available';
      unconfined?: string;
      sharedProc?: string;
      sharedFolders?: string;
      writable?: string;
      root?: string;
    }>
  | Readonly<{ kind: 'unavailable'; why: string }>
  | Readonly<{ kind: 'off' }>;

/** How far a plugin's processes are kept to themselves: a PID namespace and its own /proc, a PID namespace only, or neither. */
type Confinement = 'private' | 'pid' | 'none';

const confinementOf = (support: Readonly<{ unconfined?: string; sharedProc?: string }>): Confinement =>
  support.unconfined !== undefined ? 'none' : support.sharedProc !== undefined ? 'pid' : 'private';

/**
 * What this machine's sandbox lacks, each said why, in the order `require` mode names the first:
 * what it cannot do, then what the daemon's setup leaves shown (a private folder a folder plugins
 * run from holds, unless none can be hidden here at all).
 */
export const missingParts = (support: SandboxSupport, hidden: HiddenPaths | undefined): string[] => {
  if (support.kind !== 'available') return [];
  const shown = support.sharedFolders === undefined ? (hidden?.folders?.shown ?? []) : [];
  return [support.unconfined, support.sharedProc, support.sharedFolders, support.writable, support.root, ...shown].filter(
    (why): why is string => why !== undefined,
  );
};

/**
 * What a plugin must not see: the data dir (its real path), all of it but the plugin's own
 * folder, which is one of `pluginsDir` when it is in there; and the user's private folders.
 */
export type HiddenPaths = Readonly<{ dataDir: string; pluginsDir: string; folders?: PrivateFolders }>;

/**
 * The plugin's own folder: its path as the host found it (in the data dir, maybe a link), where
 * that leads, and the folder of the data dir the plugin keeps what it writes in.
 */
export type OwnFolder = Readonly<{ path: string; real: string; state?: string }>;

/** The descriptor a plugin's state folder is held open on while the data dir is hidden (one digit: the shell's redirections take no more). */
const STATE_FD = 9;

/**
 * A plugin folder that leads into the data dir but not to a folder of DIR/plugins, or that holds a
 * private folder: given back, it would show the plugin what the sandbox hides.
 */
export class PluginFolderOutOfPlace extends HologramError {
  readonly code = 'PLUGIN_FOLDER_OUT_OF_PLACE';
  /** `why`: what of it a plugin must not be given, or what may not hold it (a private folder, another plugin's folder). */
  constructor(plugin: string, folder: string, real: string, why?: string) {
    super(
      why === undefined
        ? `plugin '${plugin}' was not started: its folder ${folder} leads to ${real}, a part of the data dir that is not a plugin's folder; ` +
            'a plugin folder is a folder of DIR/plugins, or a link to one outside the data dir'
        : `plugin '${plugin}' was not started: its folder ${folder} leads to ${real}, ${why}; ` + 'put the plugin in a folder of its own',
    );
  }
}

/** The folders the entries of `pluginsDir` lead to, each with its entry; none when it cannot be read. */
const pluginFoldersOf = (pluginsDir: string): Readonly<{ entry: string; folder: string }>[] => {
  let names: string[];
  try {
    names = readdirSync(pluginsDir);
  } catch {
    return [];
  }
  return names.map((name) => {
    const entry = join(pluginsDir, name);
    return { entry, folder: realOrSelf(entry) };
  });
};

/**
 * The folder of another plugin of `pluginsDir` that plugin folder `real` holds, or that holds it,
 * with the entry of `pluginsDir` leading to it: the outer plugin could rewrite the inner one's
 * manifest where its folder is writable to it (a machine that cannot make mounts read-only; one
 * installed while it runs).
 */
export const pluginFolderNested = (
  pluginsDir: string,
  real: string,
): Readonly<{ entry: string; folder: string; holds: boolean }> | undefined => {
  for (const { entry, folder } of pluginFoldersOf(pluginsDir)) {
    if (folder === real) continue;
    if (isUnder(folder, real)) return { entry, folder, holds: true };
    if (isUnder(real, folder)) return { entry, folder, holds: false };
  }
  return undefined;
};

/**
 * The files of a plugin's folder that say what runs outside its sandbox: its manifest (the
 * capabilities of its next start) and what npm reads there (a red team's plugin added a
 * dependency whose install script ran, unsandboxed, when its user next ran npm in that folder).
 * Each is read-only to the plugin, and none may be a link, which it could point elsewhere.
 */
export const SETUP_FILES = [MANIFEST_FILE, 'package.json', 'package-lock.json', 'npm-shrinkwrap.json', '.npmrc'] as const;

/**
 * The folders of the other plugins of `pluginsDir` as they really are, where the sandbox does not
 * hide them already (the data dir, `hiddenTrees`) and they are not in a folder plugins run from
 * (read-only there, and bound back whole): one linked from elsewhere was read by its neighbour
 * (its state, tokens and all). Only plugin folders (holding a manifest) that hold no folder given back.
 */
export const otherPluginFolders = (
  hidden: HiddenPaths,
  ownReal: string,
  hiddenTrees: readonly string[],
  kept: readonly string[],
): string[] => {
  const folders = new Set(pluginFoldersOf(hidden.pluginsDir).map(({ folder }) => folder));
  return [...folders].filter(
    (folder) =>
      folder !== ownReal &&
      existsSync(join(folder, MANIFEST_FILE)) &&
      ![hidden.dataDir, ...hiddenTrees, ...kept].some((shown) => isUnder(folder, shown)) &&
      ![ownReal, ...kept].some((given) => isUnder(given, folder)),
  );
};

/** A plugin one of whose SETUP_FILES is a link: its user or an older start could have pointed it where the plugin writes. */
export class PluginSetupFileLinked extends HologramError {
  readonly code = 'PLUGIN_SETUP_FILE_LINKED';
  constructor(plugin: string, file: string) {
    super(
      `plugin '${plugin}' was not started: its ${basename(file)} (${file}) is a link, which the plugin could point elsewhere ` +
        `to grant itself capabilities at its next start or have npm run what it wrote; make it a file`,
    );
  }
}

/** A plugin whose state folder is a link or no folder: what it writes would go where the link leads. */
export class PluginStateFolderUnfit extends HologramError {
  readonly code = 'PLUGIN_STATE_FOLDER_UNFIT';
  constructor(plugin: string, folder: string) {
    super(
      `plugin '${plugin}' was not started: its state folder (${folder}) is a link or not a folder; ` +
        'it must be a folder of its own, the one folder the plugin may write',
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
const ID = systemProgram('id');
const AWK = systemProgram('awk');
const CAT = systemProgram('cat');
const PRLIMIT = systemProgram('prlimit');

/**
 * The most tasks (processes and threads) a plugin's processes may have at once, counted in the
 * plugin's own user namespace: a plugin that forks without end is refused more (EAGAIN) rather
 * than exhaust its user's processes, and the daemon's with them. Node takes a dozen threads; a
 * browser a few hundred. The kernel holds no process of root's to it: a daemon run as root is not bounded so.
 */
export const PLUGIN_TASKS_AT_MOST = 1024;

/**
 * What the kernel bounds a plugin's processes to: `tasks` at once (PLUGIN_TASKS_AT_MOST unless a
 * test gives fewer) and, when given, `fileBytes` for any one file they write (its state quota: a
 * write past it fails with EFBIG).
 */
export type ProcessLimits = Readonly<{ tasks: number; fileBytes?: number }>;

const fileBound = ({ fileBytes }: ProcessLimits): string => (fileBytes === undefined ? '' : ` --fsize=${fileBytes}:${fileBytes}`);

/** `text` as one word of the shell, whatever it holds. */
const quoted = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * What a plugin's sandbox hides and gives back: its folder, the data dir, the private folders and
 * those kept in them; `readOnly`, whether every folder of the machine is read-only to it but its
 * own and its empty private ones.
 */
type Plan = Readonly<{
  own: OwnFolder;
  dataDir?: string;
  trees: readonly string[];
  kept: readonly string[];
  temp?: string;
  /** A file in a hidden folder whose words are written there again, in the plugin's empty folder (the name servers /etc/resolv.conf leads to). */
  copied?: string;
  readOnly: boolean;
  limits: ProcessLimits;
}>;

/**
 * The commands that make every mount the plugin can reach read-only, from its mount table
 * (awk, on /proc/self/mountinfo): each mount point decoded (its space, tab, newline and backslash
 * are octal escapes there) and quoted for the shell; those already read-only left alone, and
 * /proc, where the user namespaces below write their user maps (its machine parts are made
 * read-only apart, MACHINE_PROC); pseudo-terminals, whose nodes a read-only mount would not
 * guard (its own are in its own /dev); and those it cannot reach left out: one whose mount point
 * another mount of the same parent covers (at that place, or at a folder above it; a mount stacked
 * on another covers that one's mounts so), and whatever is mounted on those. A
 * mount that should be made read-only and cannot stops the start (one that is a path no more, or
 * that the user cannot reach, is no way in). Last, an assignment of `covers`: the commands that
 * cover the other places the folders of HOLOGRAM_HIDDEN show (a line each, see mountCommands),
 * or stop the start where one would cover a folder of HOLOGRAM_GIVEN. One pass over the table
 * serves both, before the plugin's own /dev replaces the machine's /dev/shm in it.
 * Without the read-only mounts, a plugin whose folder is outside the
 * data dir could rename that folder or its parent and put there the manifest its next start
 * reads, and write into another plugin's folder or the user's files outside the private folders.
 */
const MOUNTS_PROGRAM = String.raw`
function decode(s,    out) {
  out = ""
  while (match(s, /\\[0-7][0-7][0-7]/)) {
    out = out substr(s, 1, RSTART - 1) sprintf("%c", substr(s, RSTART + 1, 1) * 64 + substr(s, RSTART + 2, 1) * 8 + substr(s, RSTART + 3, 1))
    s = substr(s, RSTART + 4)
  }
  return out s
}
function quote(s) { gsub(q, q "\\" q q, s); return q s q }
function under(p, folder) { return folder == "/" || p == folder || substr(p, 1, length(folder) + 1) == folder "/" }
function below(p, folder) { return folder == "/" ? p : substr(p, length(folder) + 1) }
function joined(base, rest) { return rest == "" ? base : base == "/" ? rest : base rest }
function shown(i,    p) {
  if (!(i in seen)) {
    p = row[parent[i]]
    seen[i] = !covered[i] && (!p || shown(p))
  }
  return seen[i]
}
BEGIN { q = sprintf("%c", 39) }
{
  n = NR; parent[n] = $2; device[n] = $3; root[n] = decode($4); path[n] = decode($5); options[n] = "," $6 ","
  split(substr($0, index($0, " - ") + 3), after, " "); type[n] = after[1]
  row[$1] = n
  child[$2 SUBSEP path[n]] = n
}
END {
  for (i = 1; i <= n; i++) {
    for (at = path[i]; at != "" && (k = match(at, /\/[^\/]*$/)) > 0; ) {
      at = substr(at, 1, k - 1)
      above = at == "" ? "/" : at
      if ((parent[i] SUBSEP above) in child && child[parent[i] SUBSEP above] != i) { covered[i] = 1; break }
    }
  }
  for (i = 1; i <= n; i++) {
    if (!shown(i) || index(options[i], ",ro,") || (path[i] == "/proc" && type[i] == "proc") || type[i] == "devpts") continue
    # No device of the machine through another devtmpfs either; the nodes of /dev are bound into the plugin /dev.
    print "${MOUNT} -o remount,bind,ro" (path[i] == "/dev" ? "" : ",nodev") " " quote(path[i]) " 2>/dev/null || ! [ -e " quote(path[i]) " ] || { echo the sandbox could not make " quote(path[i]) " read-only >&2; exit 126; }"
  }
  hiddenCount = split(ENVIRON["HOLOGRAM_HIDDEN"], hidden, "\n")
  givenCount = split(ENVIRON["HOLOGRAM_GIVEN"], given, "\n")
  for (g = 1; g <= givenCount; g++) given[g] = decode(given[g])
  for (h = 1; h <= hiddenCount; h++) cover(decode(hidden[h]))
  print "covers=" quote(covers)
}
function cover(folder,    i, c, at, alias, g) {
  for (i = 1; i <= n; i++) if (shown(i) && under(folder, path[i]) && (!c || length(path[i]) >= length(path[c]))) c = i
  if (!c) return
  at = joined(root[c], below(folder, path[c]))
  for (i = 1; i <= n; i++) {
    if (i == c || !shown(i) || device[i] != device[c]) continue
    if (under(at, root[i])) alias = joined(path[i], below(at, root[i]))
    else if (under(root[i], at)) alias = path[i]
    else continue
    if (under(alias, folder) || alias in done) continue
    done[alias] = 1
    for (g = 1; g <= givenCount; g++) {
      if (!under(given[g], alias)) continue
      covers = covers "echo the sandbox cannot give the plugin " quote(given[g]) ": it shows " quote(folder) ", which plugins may not see >&2; exit 126\n"
      return
    }
    covers = covers "if [ -d " quote(alias) " ]; then ${MOUNT} -t tmpfs -o size=64k,mode=0700 hologram-hidden " quote(alias) " || exit 126; " \
      "elif [ -e " quote(alias) " ]; then ${MOUNT} --bind /dev/null " quote(alias) " || exit 126; fi\n"
  }
}`;

// It goes to awk inside single quotes: one in it would end them, and every start would fail.
if (MOUNTS_PROGRAM.includes("'")) throw new Error('MOUNTS_PROGRAM holds a single quote');

/** `path` as /proc/self/mountinfo writes a mount point: its backslash, space, tab and newline as octal escapes. */
const asMountTableWrites = (path: string): string => path.replace(/[\\ \t\n]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/**
 * Every mount made read-only now, and `covers` set to what covers, once what is given back
 * (`given`) is held open, the other places `hidden` (the data dir, the private folders) show in
 * the machine's mounts, each behind an empty tmpfs: a second mount of the same files (a bind
 * mount of / or of /home, a btrfs volume mounted whole) would show them at another path,
 * read-only, but readable. A file bound elsewhere from them gets /dev/null over it. The folders
 * go to awk a line each, escaped as the mount table is (a newline in one would otherwise split it in two).
 */
const mountCommands = (hidden: readonly string[], given: readonly string[]): string[] => [
  `mounts=$(HOLOGRAM_HIDDEN=${quoted(hidden.map(asMountTableWrites).join('\n'))} HOLOGRAM_GIVEN=${quoted(given.map(asMountTableWrites).join('\n'))} ` +
    `${AWK} '${MOUNTS_PROGRAM}' /proc/self/mountinfo) || exit 126`,
  'eval "$mounts"',
];

/**
 * A /dev of its own, with nothing but what a program expects to find there (null, zero, full,
 * random, urandom, bound from the machine's; its own pseudo-terminals where the machine allows;
 * /dev/shm, empty), read-only: the machine's devices (a disk, /dev/kmsg for root; a camera or a
 * microphone for a user in their groups) are not there. Run once the machine's mounts are
 * read-only, before any other descriptor is held open: each node is bound from one held open
 * across the tmpfs, as folders are.
 */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom'];
const OWN_DEV = [
  DEVICES.map((node, i) => `${3 + i}</dev/${node}`).reduce((held, each) => `${held} ${each}`, 'exec') + ' || exit 126',
  `${MOUNT} -t tmpfs -o size=64k,mode=0755 hologram-dev /dev || exit 126`,
  ...DEVICES.map((node, i) => `: > /dev/${node} && ${MOUNT} -c --bind /proc/self/fd/${3 + i} /dev/${node} || exit 126`),
  DEVICES.map((_, i) => `${3 + i}<&-`).reduce((closed, each) => `${closed} ${each}`, 'exec'),
  ...[
    ['/proc/self/fd', '/dev/fd'],
    ['/proc/self/fd/0', '/dev/stdin'],
    ['/proc/self/fd/1', '/dev/stdout'],
    ['/proc/self/fd/2', '/dev/stderr'],
    ['pts/ptmx', '/dev/ptmx'],
  ].map(([to, link]) => `${LN} -s ${to} ${link} || exit 126`),
  `${MKDIR} /dev/shm /dev/pts && ${MOUNT} -t tmpfs -o size=64m,mode=0755 hologram-shm /dev/shm || exit 126`,
  `${MOUNT} -t devpts -o newinstance,ptmxmode=0666,mode=0620 hologram-pts /dev/pts 2>/dev/null || :`,
  `${MOUNT} -o remount,bind,ro /dev || exit 126`,
];

/** The folders strictly between `outer` and `inner`, outermost first; none unless `outer` holds `inner`. */
const between = (outer: string, inner: string | undefined): string[] => {
  if (inner === undefined || inner === outer || !isUnder(inner, outer)) return [];
  const folders: string[] = [];
  for (let folder = dirname(inner); folder !== outer && isUnder(folder, outer); folder = dirname(folder)) folders.unshift(folder);
  return folders;
};

/**
 * How many namespaces of each kind may be made in the user namespace the script runs in, and in
 * those below it: those it holds (its IPC namespace, its network one unless the plugin has the
 * machine's) and those the script still makes (two user namespaces and one PID namespace
 * confined, one user namespace not; two mount namespaces, as measured: unconfined, a root
 * daemon's plugin can make one more), no more.
 */
const namespaceLimits = (confinement: Confinement, network: boolean): Readonly<Record<string, number>> => {
  const confined = confinement !== 'none';
  return {
    user: confined ? 2 : 1,
    mnt: 2,
    pid: confined ? 1 : 0,
    ipc: 1,
    net: network ? 0 : 1,
    uts: 0,
    cgroup: 0,
    time: 0,
  };
};

/**
 * The shell that hides, gives back, then becomes the plugin (`sh -c SCRIPT sh command args…`):
 * the namespaces it may make limited to its own; where the plan says, every mount read-only and a
 * /dev of its own, then the other places the hidden folders show covered; the private folders
 * behind a tmpfs each, the kept folders (what plugins run from) back
 * read-only wherever they are, so no plugin rewrites what the next start runs, the plugin's own
 * folder back, read-only too (before the data dir is hidden when it is outside it, so a folder
 * holding the data dir shows none of it), the data dir behind a tmpfs, the plugin's folder back in
 * it when it is there, and its state folder there back writable. Each folder given back is held open across the mounts and bound back from that
 * descriptor (`-c`: mount would otherwise resolve it to the path, now hidden); a folder reached
 * through a link in the data dir gets the link again.
 */
const scriptOf = (plan: Plan, confinement: Confinement, network: boolean): string => {
  const { own, dataDir, trees, kept, temp, copied, readOnly } = plan;
  const inData = dataDir !== undefined && isUnder(own.real, dataDir);
  const inTree = trees.some((tree) => isUnder(own.real, tree));
  const holdingOwn = (folder: string): boolean => isUnder(own.real, folder);
  // Its folder bound back wherever it is when anything around it is hidden or read-only: a mount point, which it cannot rename.
  const bindsOwn = readOnly || inData || inTree || kept.some(holdingOwn);
  // Read-only around it, its folder is bound back read-only too: what is in it, its user's git and npm read and run.
  const bindOwn = `${MKDIR} -p ${quoted(own.real)} && ${MOUNT} -c --bind /proc/self/fd/3 ${quoted(own.real)} || exit 126`;
  // Its state folder, in the data dir, is given back writable (and runs nothing set-user-ID) once the data dir is hidden.
  const state = own.state === undefined ? undefined : quoted(own.state);
  const bindState =
    state === undefined
      ? []
      : [
          `${MKDIR} -p ${state} && ${MOUNT} -c --bind /proc/self/fd/${STATE_FD} ${state}` +
            `${readOnly ? ` && ${MOUNT} -o remount,bind,rw,nosuid,nodev ${state}` : ''} || exit 126`,
          `exec ${STATE_FD}<&-`,
        ];
  const bindKept = (folder: string): string => {
    const fd = 4 + kept.indexOf(folder);
    return (
      `${MKDIR} -p ${quoted(folder)} && ${MOUNT} -c --bind /proc/self/fd/${fd} ${quoted(folder)} && ` +
      `${MOUNT} -o remount,bind,ro ${quoted(folder)} || exit 126; exec ${fd}<&-`
    );
  };
  const linked = dataDir !== undefined && own.path !== own.real && isUnder(own.path, dataDir);
  return [
    // No namespace of its own beyond those made here: in a user namespace of its own a plugin mounted a cgroup tree
    // of its own namespace, writable, and froze its user's processes, the daemon's among them; a root daemon's plugin,
    // root in its own, used up the machine's network namespaces. This user namespace's limits, which it has no power
    // over, count every namespace made below it.
    ...Object.entries(namespaceLimits(confinement, network)).map(
      ([kind, most]) =>
        `[ ! -e /proc/sys/user/max_${kind}_namespaces ] || echo ${most} > /proc/sys/user/max_${kind}_namespaces || exit 126`,
    ),
    // The other places the hidden folders show, worked out while the machine's /dev/shm is still there to be found.
    ...(readOnly ? [...mountCommands([...(dataDir !== undefined ? [dataDir] : []), ...trees], [own.real, ...kept]), ...OWN_DEV] : []),
    ...(bindsOwn ? [`exec 3<${quoted(own.real)} || exit 126`] : []),
    ...kept.map((folder, i) => `exec ${4 + i}<${quoted(folder)} || exit 126`),
    ...(state === undefined ? [] : [`exec ${STATE_FD}<${state} || exit 126`]),
    // Covered once what is given back is held open; one that would cover what is given back stops the start.
    ...(readOnly ? ['eval "$covers"'] : []),
    ...(copied !== undefined ? [`copied=$(${CAT} ${quoted(copied)} 2>/dev/null)`] : []),
    ...trees.map((tree) => `${MOUNT} -t tmpfs -o size=64m,mode=0755 hologram-private ${quoted(tree)} || exit 126`),
    // Its words only, not its folder: systemd-resolved's holds a socket that answers any name asked (a way out over DNS).
    ...(copied !== undefined ? [`${MKDIR} -p ${quoted(dirname(copied))} && printf '%s\\n' "$copied" > ${quoted(copied)} || exit 126`] : []),
    // The kept folders holding the plugin's own come back before it, the others after it: each read-only, its own not.
    ...kept.filter(holdingOwn).map(bindKept),
    ...(bindsOwn && !inData ? [bindOwn] : []),
    // Its folder holding the data dir or a folder plugins run from: each folder between them a mount point, before those
    // are hidden or bound read-only, so it can rename none of them (it moved the data dir aside and planted another
    // where the daemon looks; it would plant what the next start runs).
    ...[...new Set([...kept, ...(dataDir !== undefined ? [dataDir] : [])].flatMap((inner) => between(own.real, inner)))].map(
      (folder) => `${MOUNT} --bind ${quoted(folder)} ${quoted(folder)} || exit 126`,
    ),
    ...kept.filter((folder) => !holdingOwn(folder)).map(bindKept),
    ...(dataDir !== undefined
      ? [`${MKDIR} -p ${quoted(dataDir)} && ${MOUNT} -t tmpfs -o size=64k,mode=0700 hologram-hidden ${quoted(dataDir)} || exit 126`]
      : []),
    ...(inData ? [bindOwn] : []),
    ...bindState,
    ...(bindsOwn ? ['exec 3<&-'] : []),
    ...(linked ? [`${MKDIR} -p ${quoted(dirname(own.path))} && ${LN} -s ${quoted(own.real)} ${quoted(own.path)} || exit 126`] : []),
    // Run as root with the machine's /proc, its settings read-only to it (a /proc of its own gets the same in initOf: a
    // new /proc is mounted only where the machine's shows all it holds).
    ...(confinement === 'private' ? [] : MACHINE_PROC_READ_ONLY),
    // Its manifest read-only (a plugin that rewrote it would start next time with what it granted itself), and what npm
    // reads: by themselves where its folder is not read-only to it already.
    ...(readOnly
      ? []
      : SETUP_FILES.map((file) => quoted(join(own.real, file))).map(
          (path) => `if [ -e ${path} ]; then ${MOUNT} --bind ${path} ${path} && ${MOUNT} -o remount,bind,ro ${path} || exit 126; fi`,
        )),
    // Its temporary files in its own /tmp, whatever TMPDIR the daemon has (one plugins share lets one rewrite another's tsx cache).
    ...(temp !== undefined ? [`TMPDIR=${quoted(temp)}; export TMPDIR`] : []),
    `cd ${quoted(own.real)} || exit 126`,
    // Inherited by all it starts; counted in the user namespace each gets below.
    `${PRLIMIT} -p $$ --nproc=${plan.limits.tasks}:${plan.limits.tasks}${fileBound(plan.limits)} || exit 126`,
    // The shell's own variables are not the plugin's: it gets exactly the environment it was given.
    'unset PWD OLDPWD SHLVL',
    // A user namespace of its own inside this one: the mounts above come to it locked (no umount
    // lays the data dir bare, even for a daemon run as root), and exec leaves it no capability
    // here unless it is root in it. Confined, a PID namespace too, whose first process is initOf's shell:
    // whatever the plugin starts, in a session of its own too, ends with it (`--kill-child`: and
    // with this process, which ends with the daemon, `--pdeathsig`, whether or not the plugin
    // leaves when its stdin closes). `--mount-proc`: a /proc that lists the namespace's processes only.
    confinement === 'none'
      ? `exec ${UNSHARE} --user --map-current-user --mount -- "$@"`
      : `exec ${SETPRIV} --pdeathsig KILL -- ${UNSHARE} --user --map-current-user --mount --pid --fork --kill-child${confinement === 'private' ? ' --mount-proc' : ''} -- /bin/sh -c '${initOf(confinement)}' hologram-init "$@"`,
  ].join('\n');
};

/** The parts of /proc that set the machine's kernel, not a process's. */
const MACHINE_PROC = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];

/** MACHINE_PROC read-only when run as root (only root's plugins could write them), root asked once. No single quote: initOf's too. */
const MACHINE_PROC_READ_ONLY = [
  `if [ "$(${ID} -u)" = 0 ]; then for path in ${MACHINE_PROC.join(' ')}; do ` +
    `if [ -e $path ]; then ${MOUNT} --bind $path $path && ${MOUNT} -o remount,bind,ro $path || exit 126; fi; done; fi`,
];

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
const initOf = (confinement: Confinement): string =>
  [
    'unset PWD OLDPWD SHLVL',
    // With a /proc of its own, when run as root (only root's plugins could write them), the machine's parts of it
    // read-only (those Docker makes so): such a plugin would otherwise set what the machine's kernel runs as root (its
    // core pattern, its modprobe), press SysRq or move interrupts.
    ...(confinement === 'private' ? MACHINE_PROC_READ_ONLY : []),
    'exec 3<&0',
    `${UNSHARE} --user --map-current-user --mount -- "$@" 0<&3 3<&- &`,
    'child=$!',
    'exec 3<&- 0</dev/null',
    ...['TERM', 'INT', 'HUP'].map((signal) => `trap "kill -${signal} $child 2>/dev/null" ${signal}`),
    'while :; do wait "$child"; status=$?; kill -0 "$child" 2>/dev/null || break; done',
    'exit "$status"',
  ].join('\n');

/** `--keep-caps`: the shell keeps the capabilities of its new user namespace across exec, so it may mount as any user. */
const unshareArgs = (network: boolean): string[] => [
  '--map-current-user',
  '--keep-caps',
  '--mount',
  // System V and POSIX IPC of its own: the shared memory, queues and semaphores of its user's other programs are not there.
  '--ipc',
  ...(network ? [] : ['--net']),
  '--',
];

const wrapped = (network: boolean, confinement: Confinement, plan: Plan, command: string, args: readonly string[]): string[] => [
  ...unshareArgs(network),
  '/bin/sh',
  '-c',
  scriptOf(plan, confinement, network),
  'sh',
  command,
  ...args,
];

/** Said of a daemon run as root: its plugins are root too, outside what their sandbox hides. */
const asRoot = (): { root?: string } =>
  process.getuid?.() === 0
    ? {
        root:
          'homed runs as root, so its plugins do too, and the sandbox cannot hold root: a plugin reads what root can outside ' +
          "what is hidden from it (/etc/shadow, every user's files) and reaches root's sockets outside /run; run homed as a user of its own",
      }
    : {};

/**
 * Whether this machine lets a process have its own network and mount namespaces and mount in
 * them, and its own PID namespace with a /proc of its own (asked once per daemon): without the
 * last, plugins are still sandboxed, but see the machine's processes; without a PID namespace,
 * what they start may outlive them too. With all of it, whether the user's private folders can be
 * hidden, and the folders plugins run from (`runFrom`) made read-only.
 */
export const probeSandbox = (mode: PluginSandboxMode, runFrom: readonly string[] = runtimeFolders()): SandboxSupport => {
  if (mode === 'off') return { kind: 'off' };
  const dir = mkdtempSync(join(tmpdir(), 'hologram-sandbox-probe-'));
  try {
    const own = join(dir, 'data', 'plugin');
    const kept = join(dir, 'private', 'kept');
    mkdirSync(own, { recursive: true });
    mkdirSync(kept, { recursive: true });
    const ownFolder = { path: own, real: own };
    const probe = (confinement: Confinement, more: Partial<Pick<Plan, 'trees' | 'kept' | 'readOnly'>> = {}) =>
      spawnSync(
        UNSHARE,
        wrapped(
          false,
          confinement,
          {
            own: ownFolder,
            dataDir: join(dir, 'data'),
            trees: [],
            kept: [],
            readOnly: false,
            limits: { tasks: PLUGIN_TASKS_AT_MOST },
            ...more,
          },
          'true',
          [],
        ),
        { stdio: 'ignore', timeout: 5_000 },
      );
    // The machine's folders made read-only as each start will; where that fails, it is said and the rest of the sandbox holds.
    const locking = (confinement: Confinement): { writable?: string } =>
      probe(confinement, { readOnly: true }).status === 0
        ? {}
        : { writable: "the machine's folders cannot be made read-only to plugins here, so they may write wherever their user can" };
    const sharedFolders = 'private folders (the home, /tmp) cannot be hidden here, so plugins see them';
    if (probe('private').status === 0) {
      // The folders plugins run from, bound back read-only as each start will.
      const hides = probe('private', { trees: [join(dir, 'private')], kept: outermost([kept, ...runFrom]) }).status === 0;
      return { kind: 'available', ...(hides ? {} : { sharedFolders }), ...locking('private'), ...asRoot() };
    }
    const sharedProc = "a /proc of their own cannot be mounted here, so plugins see the machine's processes";
    if (probe('pid').status === 0) return { kind: 'available', sharedProc, ...locking('pid'), ...asRoot() };
    const unconfined = probe('none');
    if (unconfined.error) return { kind: 'unavailable', why: `unshare could not run: ${unconfined.error.message}` };
    if (unconfined.status !== 0) return { kind: 'unavailable', why: 'user, mount or network namespaces are refused here' };
    return {
      kind: 'available',
      ...locking('none'),
      ...asRoot(),
      unconfined:
        "a PID namespace (or setpriv, of util-linux) is not to be had here, so what plugins start may outlive them and they see the machine's processes",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** Whether a plugin's sandbox makes every folder but its own (and its empty private ones) read-only to it. */
export const writesOnlyOwn = (support: SandboxSupport): boolean => support.kind === 'available' && support.writable === undefined;

/** The private folders a plugin's sandbox hides from it: its home too unless it asked for it. */
export const hiddenTreesFor = (
  wants: Readonly<{ home: boolean }>,
  support: SandboxSupport,
  hidden: HiddenPaths | undefined,
): readonly string[] => {
  if (support.kind !== 'available' || support.sharedFolders !== undefined || !hidden?.folders) return [];
  return [...(wants.home ? [] : hidden.folders.homes), ...hidden.folders.others];
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
  limits: Partial<ProcessLimits> = {},
): Readonly<{ command: string; args: string[] }> => {
  const aPluginsFolder = hidden !== undefined && own.real !== hidden.pluginsDir && isUnder(own.real, hidden.pluginsDir);
  if (hidden && isUnder(own.real, hidden.dataDir) && !aPluginsFolder) {
    throw new PluginFolderOutOfPlace(plugin, own.path, own.real);
  }
  if (support.kind === 'available') {
    const [missing] = missingParts(support, hidden);
    if (missing !== undefined && mode === 'require') throw new PluginSandboxUnavailable(plugin, missing);
    const privateTrees = hiddenTreesFor(wants, support, hidden);
    const holds = privateTrees.find((tree) => isUnder(tree, own.real));
    if (holds !== undefined) throw new PluginFolderOutOfPlace(plugin, own.path, own.real, `which holds ${holds}, hidden from plugins`);
    const kept = support.sharedFolders === undefined ? (hidden?.folders?.kept ?? []) : [];
    const others = hidden && privateTrees.length > 0 ? otherPluginFolders(hidden, own.real, privateTrees, kept) : [];
    const trees = [...privateTrees, ...others];
    // Its own folder, writable, would be bound over it.
    if (kept.includes(own.real)) {
      throw new PluginFolderOutOfPlace(plugin, own.path, own.real, 'which plugins run from, and none may rewrite');
    }
    const temp = hidden?.folders?.temp;
    const resolver = hidden?.folders?.resolver;
    const plan: Plan = {
      own,
      trees,
      kept,
      readOnly: writesOnlyOwn(support),
      limits: { tasks: PLUGIN_TASKS_AT_MOST, ...limits },
      ...(hidden ? { dataDir: hidden.dataDir } : {}),
      ...(temp && trees.includes(temp) ? { temp } : {}),
      ...(resolver && trees.some((tree) => isUnder(resolver, tree)) ? { copied: resolver } : {}),
    };
    return { command: UNSHARE, args: wrapped(wants.network, confinementOf(support), plan, command.command, command.args) };
  }
  if (support.kind === 'unavailable' && mode === 'require') throw new PluginSandboxUnavailable(plugin, support.why);
  return { command: command.command, args: [...command.args] };
};
