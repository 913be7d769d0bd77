/**
 * The Hologram plugin SDK: everything a plugin author imports. Subprocess plugins call
 * `runPlugin`; built-in plugins implement `BuiltinPlugin`. Facility names are the kernel's own
 * constants, so a misspelled one does not compile.
 */
export * from './pluginApi.ts';
export * from './wireMethods.ts';
export * from './manifestTypes.ts';
export * from './builtinPlugin.ts';
export { connectPlugin, runPlugin, type PluginIdentity } from './runPlugin.ts';
export { Facility, type FacilityName } from '../../actors/index.ts';
