/**
 * Where a data dir is and how it is opened. Default: `$HOLOGRAM_DATA`, else `.hologram/`
 * inside the Hologram checkout (the embedded data dir `npm start` uses).
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, EventLogUnavailable } from '../events/index.ts';
import { randomIds, systemClock } from '../actors/clock/systemClock.ts';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const EVENT_LOG_FILE = 'events.db';

export const defaultDataDir = (): string => process.env.HOLOGRAM_DATA ?? join(PACKAGE_ROOT, '.hologram');

/** Creates the data dir if needed and checks it can be written. */
export const prepareDataDir = (dir: string): string => {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true });
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
  const path = join(resolve(dir), EVENT_LOG_FILE);
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new EventLogUnavailable(`there is no event log at ${path}; start 'homed --data ${dir}' once, or check --data`);
  }
  return path;
};

export const openEventLog = (logPath: string): SqliteEventStore =>
  SqliteEventStore.open(logPath, { catalog: createDefaultCatalog(), clock: systemClock, ids: randomIds });
