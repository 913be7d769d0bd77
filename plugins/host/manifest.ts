/**
 * Reads and validates plugin manifests (`plugin.json`). Invariant: a manifest is accepted whole
 * or refused with every problem listed at once; no misspelled key, facility or capability is
 * silently ignored.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, win32 } from 'node:path';
import { Facility, INTERNAL, OWNER } from '../../actors/index.ts';
import { describeJsonSyntaxError, editDistance, HologramError } from '../../events/index.ts';
import type { PluginKind, PluginManifest } from '../sdk/manifestTypes.ts';
import { parseLuaLimits } from './manifestLimits.ts';
import { parseProfiles } from './manifestProfiles.ts';
import { PLUGIN_CAPABILITIES, type PluginCapability } from '../sdk/wireMethods.ts';

export const MANIFEST_FILE = 'plugin.json';

/** A plugin manifest that cannot be used; `problems` holds every one found. */
export class ManifestInvalid extends HologramError {
  readonly code = 'MANIFEST_INVALID';
  constructor(
    /** The manifest file (or plugin folder) at fault. */
    readonly where: string,
    readonly problems: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      `${where}: invalid plugin manifest (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        '\nfix the manifest and restart homed (plugin folders are read when it starts)',
      options,
    );
  }
}

const NAME_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/;

const KNOWN_KEYS = [
  'name',
  'version',
  'entry',
  'platforms',
  'requires_facilities',
  'capabilities',
  'auto_start',
  'auto_restart',
  'description',
  'limits',
  'env',
  'profiles',
] as const;

const FACILITY_NAMES: readonly string[] = Object.values(Facility);

/** Node's `process.platform` values. */
const PLATFORMS: readonly NodeJS.Platform[] = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'haiku',
  'linux',
  'openbsd',
  'sunos',
  'win32',
  'cygwin',
  'netbsd',
];

/**
 * Validates the parsed contents of a `plugin.json`, filling in defaults.
 *
 * @param where names the file in the error (its path).
 * @throws ManifestInvalid listing every problem found.
 * @example parseManifest({ name: 'weather', version: '1.0.0', entry: 'main.lua' }, 'plugins/weather/plugin.json')
 */
export function parseManifest(raw: unknown, where: string): PluginManifest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ManifestInvalid(where, [
      `the manifest must be a JSON object like {"name": "weather", "version": "1.0.0", "entry": "main.lua"}, not ${describeValue(raw)}`,
    ]);
  }
  const obj = raw as Record<string, unknown>;
  const problems: string[] = [];

  for (const key of Object.keys(obj)) {
    if ((KNOWN_KEYS as readonly string[]).includes(key)) continue;
    if (key === 'kind')
      problems.push(`"kind" is not set by hand: it follows from "entry" (a .lua file → lua, anything else → subprocess); remove it`);
    else problems.push(`unknown key "${key}"${suggestion(key, KNOWN_KEYS)}; known keys: ${KNOWN_KEYS.join(', ')}`);
  }

  const name = requiredString(obj, 'name', problems, 'e.g. "weather"');
  if (name !== undefined && !NAME_PATTERN.test(name)) {
    problems.push(`"name" ${JSON.stringify(name)} is not valid: use 1–40 lowercase letters, digits, '_' or '-', starting with a letter`);
  } else if (name === OWNER || name === INTERNAL) {
    // A plugin's inputs speak as the plugin: under a principal's name they would speak as that principal.
    problems.push(`"name" "${name}" is the name of a principal (the inputs it sent would speak as ${name}); choose another name`);
  }
  const version = requiredString(obj, 'version', problems, 'e.g. "1.0.0"');
  const entry = requiredString(obj, 'entry', problems, 'the program or main.lua, relative to the plugin folder');
  if (entry !== undefined) {
    if (posix.isAbsolute(entry) || win32.isAbsolute(entry)) {
      problems.push(`"entry" ${JSON.stringify(entry)} is an absolute path; give it relative to the plugin folder, e.g. "main.lua"`);
    } else if (entry.split(/[\\/]/).includes('..')) {
      problems.push(`"entry" ${JSON.stringify(entry)} leaves the plugin folder ('..'); keep the entry file inside the plugin folder`);
    }
  }

  const platforms = namesFrom(obj, 'platforms', PLATFORMS, 'platform', problems);
  const facilities = namesFrom(obj, 'requires_facilities', FACILITY_NAMES, 'facility', problems);
  const capabilities = namesFrom(obj, 'capabilities', PLUGIN_CAPABILITIES, 'capability', problems) as PluginCapability[];
  const autoStart = optionalBoolean(obj, 'auto_start', problems);
  const autoRestart = optionalBoolean(obj, 'auto_restart', problems);
  const env = envNamesFrom(obj.env, problems);
  const description = obj.description;
  if (description !== undefined && typeof description !== 'string') {
    problems.push(`"description" must be a string, not ${describeValue(description)}`);
  }

  const isLua = entry?.toLowerCase().endsWith('.lua') ?? false;
  const limits = parseLuaLimits(obj.limits, isLua, problems);
  const profiles = parseProfiles(obj.profiles, name, problems);

  if (problems.length > 0 || name === undefined || version === undefined || entry === undefined) {
    throw new ManifestInvalid(where, problems);
  }
  const kind: PluginKind = isLua ? 'lua' : 'subprocess';
  return {
    name,
    version,
    entry,
    kind,
    platforms,
    requires_facilities: facilities,
    capabilities,
    auto_start: autoStart ?? true,
    auto_restart: autoRestart ?? true,
    env,
    ...(typeof description === 'string' ? { description } : {}),
    ...(limits === undefined ? {} : { limits }),
    ...(profiles === undefined ? {} : { profiles }),
  };
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `env`: the environment variables (beyond the allow-list) the plugin's process is given, by name. */
function envNamesFrom(value: unknown, problems: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`"env" must be an array of environment variable names, e.g. ["WEATHER_CITY"], not ${describeValue(value)}`);
    return [];
  }
  const names: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || !ENV_NAME.test(item)) {
      problems.push(`"env"[${i}] must be a variable name (letters, digits, '_', not starting with a digit), not ${describeValue(item)}`);
    } else if (!names.includes(item)) {
      names.push(item);
    }
  });
  return names;
}

/**
 * Reads `<dir>/plugin.json`, validates it and checks that its entry file exists.
 *
 * @throws ManifestInvalid when the file is missing, is not JSON, is invalid, or its entry is missing.
 */
export function loadManifest(dir: string): PluginManifest {
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ManifestInvalid(
      path,
      [
        missing
          ? `file not found; every plugin folder needs a ${MANIFEST_FILE} with at least "name", "version" and "entry"`
          : `cannot be read (${(error as Error).message}); check its permissions`,
      ],
      { cause: error },
    );
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManifestInvalid(path, [`is not valid JSON at ${describeJsonSyntaxError(text, error as Error)}`], {
      cause: error,
    });
  }
  const manifest = parseManifest(raw, path);
  const entryPath = join(dir, manifest.entry);
  if (!isFile(entryPath)) {
    throw new ManifestInvalid(path, [`"entry" ${JSON.stringify(manifest.entry)} names no file in ${dir}; add it or correct "entry"`]);
  }
  return manifest;
}

export type DiscoveredPlugin = Readonly<{ dir: string; manifest: PluginManifest }>;
export type InvalidPlugin = Readonly<{ dir: string; error: ManifestInvalid }>;
export type SkippedPlugin = Readonly<{ dir: string; manifest: PluginManifest; reason: string }>;

export type Discovery = Readonly<{
  found: readonly DiscoveredPlugin[];
  invalid: readonly InvalidPlugin[];
  /** Valid manifests whose `platforms` exclude this one. */
  skipped: readonly SkippedPlugin[];
}>;

/**
 * Loads the manifest of every immediate subfolder of `pluginsDir` (in name order; folders
 * starting with '.' are ignored). Platform filtering comes first, so variants of one plugin for
 * different platforms may share a name; among the rest a repeated name makes the later folder invalid.
 * A missing `pluginsDir` yields nothing.
 */
export function discoverPlugins(pluginsDir: string, options: { platform?: string } = {}): Discovery {
  const platform = options.platform ?? process.platform;
  const found: DiscoveredPlugin[] = [];
  const invalid: InvalidPlugin[] = [];
  const skipped: SkippedPlugin[] = [];
  if (!existsSync(pluginsDir)) return { found, invalid, skipped };

  const folders = readdirSync(pluginsDir)
    .filter((entry) => !entry.startsWith('.') && isDirectory(join(pluginsDir, entry)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const dirByName = new Map<string, string>();
  for (const folder of folders) {
    const dir = join(pluginsDir, folder);
    let manifest: PluginManifest;
    try {
      manifest = loadManifest(dir);
    } catch (error) {
      if (!(error instanceof ManifestInvalid)) throw error;
      invalid.push({ dir, error });
      continue;
    }
    if (manifest.platforms.length > 0 && !manifest.platforms.includes(platform)) {
      skipped.push({ dir, manifest, reason: `runs only on ${manifest.platforms.join(', ')}; this is ${platform}` });
      continue;
    }
    const first = dirByName.get(manifest.name);
    if (first !== undefined) {
      const error = new ManifestInvalid(join(dir, MANIFEST_FILE), [
        `"name" "${manifest.name}" is already taken by the plugin in ${first}; plugin names must be unique: rename one of the two, or remove the duplicate folder ${dir}`,
      ]);
      invalid.push({ dir, error });
      continue;
    }
    dirByName.set(manifest.name, dir);
    found.push({ dir, manifest });
  }
  return { found, invalid, skipped };
}

function requiredString(obj: Record<string, unknown>, key: string, problems: string[], hint: string): string | undefined {
  const value = obj[key];
  if (value === undefined) {
    problems.push(`"${key}" is missing; add it (${hint})`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    problems.push(`"${key}" must be a non-empty string (${hint}), not ${describeValue(value)}`);
    return undefined;
  }
  return value;
}

function optionalBoolean(obj: Record<string, unknown>, key: string, problems: string[]): boolean | undefined {
  const value = obj[key];
  if (value === undefined || typeof value === 'boolean') return value;
  problems.push(`"${key}" must be true or false, not ${describeValue(value)}`);
  return undefined;
}

/** An optional array of names, each one of `valid`; reports each bad element with a suggestion and the valid list. */
function namesFrom(obj: Record<string, unknown>, key: string, valid: readonly string[], noun: string, problems: string[]): string[] {
  const value = obj[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`"${key}" must be an array of strings, e.g. ["${valid[0] ?? ''}"], not ${describeValue(value)}`);
    return [];
  }
  const names: string[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string') {
      problems.push(`"${key}"[${i}] must be a string, not ${describeValue(item)}`);
    } else if (!valid.includes(item)) {
      problems.push(`"${key}" names unknown ${noun} "${item}"${suggestion(item, valid)}; valid: ${valid.join(', ')}`);
    } else if (!names.includes(item)) {
      names.push(item);
    }
  });
  return names;
}

/** ` (did you mean "x"?)` for the closest candidate within edit distance 2, else ''. */
function suggestion(word: string, candidates: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
