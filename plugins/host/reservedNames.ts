/**
 * Who may take a tool or channel name. Pure: decided from the registry and the built-in
 * plugins' reservations, so the hub can decide inside its append queue and two claims of one
 * name can never both pass. A name is taken when any plugin holds it; a built-in plugin's
 * names (its own name, `NAME_…`, and every name it registered this boot) are reserved for it
 * even while it holds nothing; `output_send__…` tools are the kernel's.
 */
import { OUTPUT_SEND_PREFIX } from '../../actors/index.ts';
import type { PluginRegistry } from '../../actors/index.ts';

export type NameKind = 'tool' | 'channel';

export type Reservations = Readonly<{
  /** Names of the built-in plugins: their `NAME` and `NAME_…` prefixes are theirs. */
  builtins: ReadonlySet<string>;
  /** Exact names a built-in plugin registered this boot, and which one. */
  held: ReadonlyMap<string, string>;
}>;

export const noReservations = (): Reservations => ({ builtins: new Set(), held: new Map() });

const ownerOf = (registry: PluginRegistry, kind: NameKind, name: string): string | undefined =>
  kind === 'tool' ? registry.tools.get(name)?.plugin : registry.channels.get(name)?.owner;

const prefixOwner = (builtins: ReadonlySet<string>, name: string): string | undefined =>
  [...builtins].find((b) => name === b || name.startsWith(`${b}_`));

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
  const rename = `give it a name of your own, prefixed with your plugin's name (e.g. '${plugin}_${name.split('_').at(-1)}')`;
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
  return builtin === undefined ? null : `${kind} '${name}' is reserved for the built-in plugin '${builtin}'; ${rename}`;
};
