/**
 * The plugin process groups that may still be alive, as a pure fold: a group is open from
 * its `PluginProcessSpawned` until it ended (`PluginProcessGroupEnded`) or a later daemon
 * reaped it (`PluginProcessGroupReaped`). A daemon that was killed leaves its groups open.
 */
import type { AnyEvent, PluginEvent } from '../../events/index.ts';

export type OpenGroup = Readonly<{ plugin: string; pid: number; startTicks: number | null; bootId: string | null; instance: string }>;

export type ProcessGroups = ReadonlyMap<number, OpenGroup>;

export const emptyProcessGroups = (): ProcessGroups => new Map();

const GROUP_EVENTS: readonly string[] = ['PluginProcessSpawned', 'PluginProcessGroupEnded', 'PluginProcessGroupReaped'];
const isGroupEvent = (event: AnyEvent): event is PluginEvent => GROUP_EVENTS.includes(event.type);

export const foldProcessGroups = (groups: ProcessGroups, any: AnyEvent): ProcessGroups => {
  if (!isGroupEvent(any)) return groups;
  const event = any;
  switch (event.type) {
    case 'PluginProcessSpawned': {
      const { plugin, pid, startTicks, bootId, instance } = event.data;
      return new Map(groups).set(pid, { plugin, pid, startTicks, bootId, instance });
    }
    case 'PluginProcessGroupEnded':
    case 'PluginProcessGroupReaped': {
      if (!groups.has(event.data.pid)) return groups;
      const next = new Map(groups);
      next.delete(event.data.pid);
      return next;
    }
    default:
      return groups;
  }
};
