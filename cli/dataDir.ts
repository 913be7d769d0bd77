/**
 * Where a data dir is and how it is opened. Default: `$HOLOGRAM_DATA`, else `.hologram/`
 * inside the Hologram checkout (the embedded data dir `npm start` uses). What homed creates
 * there is private to the user (files 0600, directories 0700), whatever the umask it got.
 */
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readlinkSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, EventLogUnavailable, HologramError } from '../events/index.ts';
import { systemClock, timeOrderedIds } from '../actors/clock/systemClock.ts';
import { withDataDir } from './shellWords.ts';
import { refuseNonDirectory } from './dataDirKind.ts';

export { dataDirFrom, defaultDataDir } from './defaultDataDir.ts';

import { EVENT_LOG_FILE } from '../actors/modules/config.ts';

export { EVENT_LOG_FILE };

/** Group and others get nothing of what homed (and the plugins it starts) creates. */
export const PRIVATE_UMASK = 0o077;

/**
 * Sets the process umask so every file and directory homed, SQLite (events.db and its -wal
 * and -shm, vectors.db), the cli socket and the plugins create is private. Call it first.
 */
export const makeCreatedFilesPrivate = (): void => {
  process.umask(PRIVATE_UMASK);
};

/** A command other than starting homed and `homed init` was pointed at a data dir that is not there. */
export class DataDirMissing extends HologramError {
  readonly code = 'DATA_DIR_MISSING';
  constructor(readonly dir: string) {
    super(
      `the data dir ${dir} does not exist; make it with: ${withDataDir('homed init', dir)} (it sets up the model), ` +
        `or start homed on it: ${withDataDir('homed', dir)}`,
    );
  }
}

/**
 * The data dir of a command that uses one but must not make it (`homed chat`, `homed secret`):
 * only starting homed and `homed init` make a data dir, so a mistyped --data leaves nothing behind.
 * @throws DataDirMissing when it is not there; EventLogUnavailable when it is not a folder.
 */
export const existingDataDir = (dir: string): string => {
  const path = resolve(dir);
  refuseNonDirectory(path);
  if (existsSync(path)) return path;
  // Where making it would fail too, say why instead of how to make it.
  const link = linkTarget(path);
  if (link !== undefined)
    throw new EventLogUnavailable(
      `the data dir ${path} is a link to ${link}, which does not exist; make that folder, or give --data another one`,
    );
  for (let above = dirname(path); above !== dirname(above); above = dirname(above)) {
    if (!existsSync(above)) continue;
    if (!statSync(above).isDirectory())
      throw new EventLogUnavailable(`the data dir ${path} cannot be a folder: ${above} is a file; give --data another one`);
    break;
  }
  throw new DataDirMissing(path);
};

/** Where a link at `path` points, when `path` is a link (a dangling one, here). */
const linkTarget = (path: string): string | undefined => {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Makes `path` and the folders missing above it, one level at a time (0700). Node's own
 * recursive mkdir never returns where a level cannot be made though its parent is there
 * (`/proc/x` answers ENOENT): it tries again for ever, deaf to signals.
 */
const makeFolders = (path: string): void => {
  const missing: string[] = [];
  for (let at = path; !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const folder of missing.reverse()) mkdirSync(folder, { mode: 0o700 });
};

/** Creates the data dir if needed (0700) and checks it can be written. */
export const prepareDataDir = (dir: string): string => {
  const path = resolve(dir);
  refuseNonDirectory(path);
  try {
    makeFolders(path);
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (error) {
    throw new EventLogUnavailable(
      `the data dir ${path} cannot be created or written (${(error as Error).message}); ` +
        `fix its permissions or choose another one with --data DIR`,
      { cause: error },
    );
  }
  return path;
};

/** Opens the event log of a data dir that must already exist (for log and replay). */
export const existingLogPath = (dir: string): string => {
  refuseNonDirectory(resolve(dir));
  const path = join(resolve(dir), EVENT_LOG_FILE);
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new EventLogUnavailable(`there is no event log at ${path}; start 'homed --data ${dir}' once, or check --data`);
  }
  return path;
};

/** `whenFull`: asked when an append meets a full disk; true when it freed room, and the append is tried once more. */
export const openEventLog = (logPath: string, whenFull?: () => boolean): SqliteEventStore =>
  SqliteEventStore.open(logPath, {
    catalog: createDefaultCatalog(),
    clock: systemClock,
    ids: timeOrderedIds,
    ...(whenFull ? { whenFull } : {}),
  });
