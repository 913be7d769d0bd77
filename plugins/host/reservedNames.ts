/**
 * Who may take a tool or channel name. Pure: decided from the registry and the built-in
 * plugins' reservations, so the hub can decide inside its append queue and two claims of one
 * name can never both pass. A name is taken when any plugin holds it; a built-in plugin's
 * names (its own name, `NAME_…`, and every name it registered this boot) are reserved for it
 * even while it holds nothing; every other plugin loaded this boot has its own name and `NAME_…`
 * (a hostile helper's plugin took another's tool name first, and the other was the one refused
 * and recorded); `output_send__…` tools are the kernel's.
 */
import { OUTPUT_SEND_PREFIX } from '../../actors/index.ts';
import type { PluginRegistry } from '../../actors/index.ts';

export type NameKind = 'tool' | 'channel';

export type Reservations = Readonly<{
  /** Names of the built-in plugins: their `NAME` and `NAME_…` prefixes are theirs. */
  builtins: ReadonlySet<string>;
  /** Exact names a built-in plugin registered this boot, and which one. */
  held: ReadonlyMap<string, string>;
  /** Names of the plugins loaded this boot: their `NAME` and `NAME_…` prefixes are theirs. */
  loaded: ReadonlySet<string>;
}>;

export const noReservations = (): Reservations => ({ builtins: new Set(), held: new Map(), loaded: new Set() });

const ownerOf = (registry: PluginRegistry, kind: NameKind, name: string): string | undefined =>
  kind === 'tool' ? registry.tools.get(name)?.plugin : registry.channels.get(name)?.owner;

/** The plugin among `plugins` whose name or `NAME_` prefix `name` is (the longest, when one plugin's name begins another's). */
const prefixOwner = (plugins: ReadonlySet<string>, name: string): string | undefined => {
  let owner: string | undefined;
  for (const p of plugins) if ((name === p || name.startsWith(`${p}_`)) && p.length > (owner?.length ?? -1)) owner = p;
  return owner;
};

/**
 * Why `plugin` may not take `name` now, or null when it may.
 * @example nameConflict(registry, reservations, 'thief', 'tool', 'files_read')
 *   // "tool 'files_read' is reserved for the built-in plugin 'files'; …"
 */
export const nameConflict = (
  registry: PluginRegistry,
  reservations: Reservations,
  plugin: string,
  kind: NameKind,
  name: string,
): string | null => {
  const ownName = `${plugin}_${name.split('_').at(-1)}`;
  const rename =
    ownName === name ? 'give yours another name' : `give it a name of your own, prefixed with your plugin's name (e.g. '${ownName}')`;
  if (kind === 'tool' && name.startsWith(OUTPUT_SEND_PREFIX)) {
    return `tool names starting with '${OUTPUT_SEND_PREFIX}' belong to the kernel (one per output channel); ${rename}`;
  }
  const holder = ownerOf(registry, kind, name);
  if (holder !== undefined) {
    return holder === plugin
      ? `${kind} '${name}' is already registered by '${plugin}' itself; register each name once`
      : `${kind} '${name}' is already registered by '${holder}'; ${rename}`;
  }
  if (reservations.builtins.has(plugin)) return null;
  const builtin = reservations.held.get(name) ?? prefixOwner(reservations.builtins, name);
  if (builtin !== undefined) return `${kind} '${name}' is reserved for the built-in plugin '${builtin}'; ${rename}`;
  const owner = prefixOwner(reservations.loaded, name);
  return owner === undefined || owner === plugin
    ? null
    : `${kind} '${name}' is reserved for the plugin '${owner}' (a plugin's name and names beginning '${owner}_' are its own); ${rename}`;
};
