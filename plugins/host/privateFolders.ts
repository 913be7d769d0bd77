/**
 * The folders of the machine a subprocess plugin must not see besides the data dir: its user's
 * home (the account's, and $HOME where it differs), the user's runtime folder (/run/user/UID,
 * where agents and keyrings listen) and /run, /tmp, the daemon's TMPDIR and /dev/shm (other
 * programs' files and sockets, ssh-agent's among them: a socket is reached through its path,
 * network namespace or not, and through a read-only folder too). Each is hidden behind an empty
 * tmpfs but for the plugin's own folder and the folders a plugin runs from (the daemon's install,
 * Node's, tsx's), given back read-only wherever they are. A folder a plugin runs from that holds one of them leaves that one shown,
 * and the start says so.
 */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isUnder } from '../../actors/index.ts';

/**
 * `homes`, hidden unless the plugin's manifest asks for `home`; `others`, hidden from every
 * plugin; `kept`, the folders in them given back read-only; `shown`, why a folder that should be
 * hidden is not.
 */
export type PrivateFolders = Readonly<{
  homes: readonly string[];
  others: readonly string[];
  kept: readonly string[];
  shown: readonly string[];
  /** The temporary folder (/tmp) among those hidden: a plugin's TMPDIR, its own (a TMPDIR shared by plugins let one poison another's tsx cache). */
  temp?: string;
  /** The file /etc/resolv.conf leads to, when in one of them (/run): what it says is written there again for the plugin. */
  resolver?: string;
}>;

/** How many folders a plugin may be given back besides its own (each is held open on a descriptor of its own, 4 to 8; 9 holds its state folder). */
export const MOST_KEPT = 5;

/** The real path of `path` when it is a folder other than the root: one that can be hidden. */
const hideableFolder = (path: string | undefined): string | undefined => {
  if (!path) return undefined;
  try {
    const real = realpathSync(path);
    return real !== '/' && statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
};

/** Where `path` really leads, or `path` itself when it is gone (what uses it then fails, saying so). */
export const realOrSelf = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** Each folder once, those inside another left out. */
export const outermost = (folders: readonly string[]): string[] => {
  const unique = [...new Set(folders)];
  return unique.filter((folder) => !unique.some((other) => other !== folder && isUnder(folder, other)));
};

/**
 * What of `homes` and `others` can be hidden, given the folders plugins run from (`needed`): one
 * that a folder of `needed` holds stays shown, said why (a private folder inside another hidden
 * one, too: the kept folder gives it back); the folders of `needed` are kept (the outermost of
 * each), given back read-only wherever they are. Pure: paths as they are given.
 */
export const privateFoldersOf = (
  candidates: Readonly<{ homes: readonly string[]; others: readonly string[]; temp?: string; resolver?: string }>,
  needed: readonly string[],
): PrivateFolders => {
  const shown: string[] = [];
  const hideable = (tree: string): boolean => {
    const holder = needed.find((folder) => isUnder(tree, folder));
    if (holder !== undefined) shown.push(`${tree} is not hidden from plugins: ${holder}, which they run from, holds it`);
    return holder === undefined;
  };
  const trees = outermost([...new Set([...candidates.homes, ...candidates.others])].filter(hideable));
  const homes = trees.filter((tree) => candidates.homes.includes(tree));
  const others = trees.filter((tree) => !candidates.homes.includes(tree));
  const kept = outermost(needed);
  if (kept.length > MOST_KEPT) {
    return {
      homes: [],
      others: [],
      kept: [],
      shown: [`no private folder is hidden from plugins: they run from ${kept.length} folders in them`],
    };
  }
  const temp = candidates.temp !== undefined && others.includes(candidates.temp) ? { temp: candidates.temp } : {};
  const { resolver } = candidates;
  const copied = resolver !== undefined && trees.some((tree) => isUnder(resolver, tree)) ? { resolver } : {};
  return { homes, others, kept, shown, ...temp, ...copied };
};

/** The folder of the daemon's own package (its package.json's), which a plugin runs from (the SDK; tsx for TypeScript entries). */
export const installRoot = (): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return here;
};

/** The package folder of tsx, which runs TypeScript entries: where the daemon's install has it (hoisted, it may be beside it). */
const tsxFolder = (): string | undefined => {
  try {
    let dir = dirname(fileURLToPath(import.meta.resolve('tsx')));
    while (dir !== dirname(dir) && !existsSync(join(dir, 'package.json'))) dir = dirname(dir);
    // The node_modules holding it, with what it depends on.
    return dirname(dir);
  } catch {
    return undefined;
  }
};

/** The folders a plugin runs from: the daemon's install, Node's own folder (its binary's), and tsx's. */
export const runtimeFolders = (): string[] =>
  [installRoot(), dirname(process.execPath), tsxFolder()].filter((folder): folder is string => folder !== undefined).map(realOrSelf);

/** The private folders of this machine's user, for `privateFoldersOf`. */
export const machinePrivateFolders = (): Readonly<{ homes: string[]; others: string[]; temp?: string; resolver?: string }> => {
  const uid = process.getuid?.();
  // Both where the environment says and where the system keeps it: `sudo -E` carries another user's.
  const runtimes = [process.env.XDG_RUNTIME_DIR, uid !== undefined ? `/run/user/${uid}` : undefined];
  const account = (() => {
    try {
      return userInfo().homedir;
    } catch {
      return undefined;
    }
  })();
  const homes = [account, homedir()].map(hideableFolder).filter((folder): folder is string => folder !== undefined);
  const temp = hideableFolder('/tmp');
  // The daemon's own TMPDIR too, wherever it is: its tsx cache, were a plugin to write there, would run in the daemon.
  // And /run, where services listen (GNU screen's sessions, which run what they are sent; the system bus; a database).
  const others = [...runtimes, temp, tmpdir(), '/dev/shm', '/run']
    .map(hideableFolder)
    .filter((folder): folder is string => folder !== undefined);
  // Where /etc/resolv.conf leads (systemd-resolved's file, NetworkManager's, in /run): a plugin with the network needs its name servers.
  const resolver = realOrSelf('/etc/resolv.conf');
  return { homes, others, ...(temp ? { temp } : {}), ...(resolver !== '/etc/resolv.conf' ? { resolver } : {}) };
};
