/** The plugin manifest (`plugin.json`) once validated. */
import type { PluginCapability } from './wireMethods.ts';

export type PluginKind = 'subprocess' | 'lua' | 'builtin';

/** A Lua plugin's limits (manifest `limits`): its VM's memory ceiling and each call's instruction budget. */
export type LuaLimits = Readonly<{ memory_mb?: number; instructions?: number; time_ms?: number }>;

/** The principals a plugin injects inputs as (`<plugin>.<profile>`), each with its tool rules. */
export type PluginProfiles = Readonly<
  Record<string, Readonly<{ allow?: readonly string[]; deny?: readonly string[]; approve?: readonly string[] }>>
>;

export type PluginManifest = Readonly<{
  name: string;
  version: string;
  /** Path of the program (subprocess: a .js/.ts file run with node, or an executable) or `main.lua`, relative to the plugin's folder. */
  entry: string;
  kind: PluginKind;
  /** Node's `process.platform` values it runs on; empty = everywhere. */
  platforms: readonly string[];
  /** Facility names (see `Facility`) the plugin needs; a misspelled one is refused at load. */
  requires_facilities: readonly string[];
  capabilities: readonly PluginCapability[];
  auto_start: boolean;
  /** Restart after a crash (default true). */
  auto_restart: boolean;
  /** Environment variables (by name) a subprocess plugin is given beyond the allow-list; never the daemon's API keys. */
  env?: readonly string[];
  description?: string;
  /** Lua plugins only; defaults 64 MB and 2,000,000 instructions. */
  limits?: LuaLimits;
  /** Who its inputs may speak as; an input names one of these, or it is from the plugin itself. */
  profiles?: PluginProfiles;
}>;
