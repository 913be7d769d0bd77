/**
 * Commands printed for a person to paste into a shell: a path as the shell reads it back, and
 * `--data DIR` only when the data dir is not the one the command finds by itself. Pure.
 */
import { resolve } from 'node:path';
import { defaultDataDir } from './defaultDataDir.ts';

/** A path as a shell reads it back: bare when it is plain, in single quotes otherwise. */
export const shellWord = (path: string): string => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);

/**
 * `command` for the data dir `dir`: with `--data DIR` (quoted for the shell) unless `dir` is the
 * default data dir, which the command uses without it.
 *
 * @example withDataDir('homed init', '/srv/my data') // "homed init --data '/srv/my data'"
 */
export const withDataDir = (command: string, dir: string): string =>
  resolve(dir) === resolve(defaultDataDir()) ? command : `${command} --data ${shellWord(dir)}`;
