/**
 * The `files` built-in plugin: read, write and list text files, confined to the roots of the
 * `plugins.files.roots` setting (default `<dataDir>/files`). Every path goes through
 * `confinePath` first; a refusal comes back to the model as an isError tool result.
 */
import { mkdir } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { type DaemonPaths, DEFAULT_FILES_ROOT, daemonPathsOf, realDaemonPaths } from '../../../actors/index.ts';
import type { BuiltinPlugin } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import type { PluginApi } from '../../sdk/pluginApi.ts';
import { confinePath } from './confinePath.ts';
import { refuseDaemonFiles } from './daemonFiles.ts';
import { InvalidFilesArgument, InvalidFilesRoots } from './errors.ts';
import { listDir } from './listDir.ts';
import { MAX_READ_BYTES, readText } from './readText.ts';
import { writeText } from './writeText.ts';
import { replyOrRefuse } from '../shared/replyOrRefuse.ts';

export const filesManifest: PluginManifest = {
  name: 'files',
  version: '0.1.0',
  entry: 'builtin:files',
  kind: 'builtin',
  platforms: [],
  requires_facilities: [],
  capabilities: ['tools', 'settings'],
  auto_start: true,
  auto_restart: true,
  description: 'Read, write and list text files inside configured root directories.',
};

/** Read from the plugin's own settings subtree: `plugins.files.roots` in settings.json. */
export const ROOTS_SETTING = 'roots';

/** The roots as absolute paths: the setting's entries resolved against the data dir, or `<dataDir>/files`. */
export const resolveRoots = (setting: unknown, dataDir: string): readonly string[] => {
  if (setting === undefined || setting === null) return [join(dataDir, DEFAULT_FILES_ROOT)];
  if (!Array.isArray(setting) || setting.length === 0) throw new InvalidFilesRoots(setting);
  return setting.map((root: unknown) => {
    if (typeof root !== 'string' || root.trim() === '') throw new InvalidFilesRoots(setting);
    return isAbsolute(root) ? resolve(root) : resolve(dataDir, root);
  });
};

type Args = Readonly<Record<string, unknown>>;

const stringArg = (tool: string, args: Args, field: string): string => {
  const value = args[field];
  if (typeof value !== 'string' || value === '') throw new InvalidFilesArgument(tool, field, 'a non-empty string');
  return value;
};

const countArg = (tool: string, args: Args, field: string, fallback: number, min: number): number => {
  const value = args[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidFilesArgument(tool, field, `an integer ≥ ${min}`);
  }
  return value;
};

const registerTools = async (api: PluginApi, roots: readonly string[], daemon: DaemonPaths): Promise<void> => {
  const rootsNote = `Allowed roots: ${roots.join(', ')}; a relative path is taken from ${roots[0]}.`;
  const confined = async (path: string) => refuseDaemonFiles(await confinePath(path, roots), daemon);

  await api.registerTool(
    {
      name: 'files_read',
      access: { read: ['path'] },
      description: `Read a UTF-8 text file, at most ${MAX_READ_BYTES} bytes per call (use offset to read on). ${rootsNote}`,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File to read.' },
          offset: { type: 'integer', minimum: 0, description: 'Byte to start at (default 0).' },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_READ_BYTES,
            description: `Bytes to read (default and most ${MAX_READ_BYTES}).`,
          },
        },
        required: ['path'],
      },
    },
    (args) =>
      replyOrRefuse(async () => {
        const path = stringArg('files_read', args, 'path');
        const offset = countArg('files_read', args, 'offset', 0, 0);
        const limit = countArg('files_read', args, 'limit', MAX_READ_BYTES, 1);
        return readText(await confined(path), { offset, limit });
      }),
  );

  await api.registerTool(
    {
      name: 'files_write',
      access: { write: ['path'] },
      description: `Write a UTF-8 text file (replacing it, or appending with append: true); missing parent directories are created. ${rootsNote}`,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File to write.' },
          content: { type: 'string', description: 'The text to write.' },
          append: { type: 'boolean', description: 'Add to the end instead of replacing (default false).' },
        },
        required: ['path', 'content'],
      },
    },
    (args) =>
      replyOrRefuse(async () => {
        const path = stringArg('files_write', args, 'path');
        const content = args.content;
        if (typeof content !== 'string') throw new InvalidFilesArgument('files_write', 'content', 'a string');
        const append = args.append ?? false;
        if (typeof append !== 'boolean') throw new InvalidFilesArgument('files_write', 'append', 'true or false');
        return writeText(await confined(path), content, append);
      }),
  );

  await api.registerTool(
    {
      name: 'files_list',
      access: { read: ['path'] },
      description: `List a directory (default: the first root). ${rootsNote}`,
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Directory to list.' } },
      },
    },
    (args) =>
      replyOrRefuse(async () => {
        const path = args.path === undefined ? '.' : stringArg('files_list', args, 'path');
        return listDir(await confined(path));
      }),
  );
};

export const filesPlugin: BuiltinPlugin = {
  manifest: filesManifest,
  async start(api, env) {
    const setting = await api.setting(ROOTS_SETTING);
    const roots = resolveRoots(setting, env.dataDir);
    if (setting === undefined || setting === null) await mkdir(roots[0]!, { recursive: true });
    await registerTools(api, roots, realDaemonPaths(daemonPathsOf(env.dataDir, roots)));
    api.log(`serving ${roots.join(', ')}`);
    return { stop: async () => undefined };
  },
};
