/**
 * Settings of a data dir: `DIR/settings.json`, optional. A file that is not valid JSON, or
 * whose settings do not fit the schema, is an error naming the file and every problem in it,
 * never silently replaced by defaults. Overrides for one run (`homed chat`'s flags) are laid
 * over the file's and checked against the same schema.
 */
import { join } from 'node:path';
import { readPlacedFile } from '../../adapters/files/privateFiles.ts';
import { describeJsonSyntaxError, HologramError, isPlainObject } from '../../events/index.ts';
import { checkSettings } from '../settings/checkSettings.ts';
import { SETTINGS_SCHEMA } from '../settings/settingsSchema.ts';

export class InvalidSettings extends HologramError {
  readonly code = 'INVALID_SETTINGS';
}

export type Settings = Readonly<Record<string, unknown>>;

export const SETTINGS_FILE = 'settings.json';

/** The event log, in the data dir. */
export const EVENT_LOG_FILE = 'events.db';

/** The cache of embedding vectors, in the data dir (rebuildable). */
export const VECTOR_CACHE_FILE = 'vectors.db';

/** The recall index as the last stop or idle spell left it, in the data dir (a cache: a start rebuilds without it). */
export const INDEX_SNAPSHOT_FILE = 'memory-index.snapshot';

/**
 * An idle daemon writes the snapshot again once it lacks this many memory events: a start after a
 * crash then catches up at most about this many (and what came since the last idle spell).
 */
export const INDEX_SNAPSHOT_LAG = 2_000;

/** `overrides` laid over `settings`: objects merge key by key, anything else (a list, a value) replaces. */
export const overlaySettings = (settings: Settings, overrides: Settings): Settings => {
  const merged: Record<string, unknown> = { ...settings };
  for (const [key, value] of Object.entries(overrides)) {
    const under = merged[key];
    merged[key] = isPlainObject(under) && isPlainObject(value) ? overlaySettings(under, value) : value;
  }
  return merged;
};

/**
 * The data dir's settings, with `overrides` for this run laid over them (see `overlaySettings`).
 * @throws InvalidSettings naming the file (or the overrides) and every problem found.
 */
export const loadSettings = (dataDir: string, overrides?: Settings): Settings => {
  const file = loadSettingsFile(dataDir);
  if (overrides === undefined) return file;
  const problems = checkSettings(overrides, SETTINGS_SCHEMA);
  if (problems.length > 0) {
    throw new InvalidSettings(`the settings given for this run do not fit: ${problems.map((p) => `${p.key}: ${p.problem}`).join('; ')}`);
  }
  return overlaySettings(file, overrides);
};

const loadSettingsFile = (dataDir: string): Settings => {
  const path = join(dataDir, SETTINGS_FILE);
  let read: Buffer | undefined;
  try {
    read = readPlacedFile(path, (why) => new InvalidSettings(`${why}; make it a JSON file of settings, or remove it`));
  } catch (error) {
    if (error instanceof InvalidSettings) throw error;
    throw new InvalidSettings(`${path} cannot be read (${(error as Error).message}); fix its permissions or remove it`, { cause: error });
  }
  if (read === undefined) return {};
  const text = read.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidSettings(`${path} is not valid JSON at ${describeJsonSyntaxError(text, error as Error)}; fix or remove it`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidSettings(`${path} must hold a JSON object of settings`);
  }
  const problems = checkSettings(parsed, SETTINGS_SCHEMA);
  if (problems.length > 0) {
    const lines = problems.map((p) => `  ${p.key}: ${p.problem}`).join('\n');
    throw new InvalidSettings(
      `${path} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}; fix ${problems.length === 1 ? 'it' : 'them'} and start again:\n${lines}`,
    );
  }
  return parsed as Settings;
};

/** A setting by dotted path (`projections.inline`), or the fallback. */
export const setting = <T>(settings: Settings, path: string, fallback: T): T => {
  let current: unknown = settings;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null || !(key in current)) return fallback;
    current = (current as Record<string, unknown>)[key];
  }
  return current as T;
};
