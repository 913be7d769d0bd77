/**
 * The plugins as a turn sees them: what they offer now (tools, stage handlers, channels), and how to reach each.
 * A tool's answer comes back whole (a frame bounds it): the security proxy above cuts it once it is scrubbed.
 */
import type { StageHandlers, TurnPlugins } from '../../actors/index.ts';
import type { PluginHub } from './pluginHub.ts';

export const turnPluginsOf = (hub: PluginHub): TurnPlugins => ({
  toolset: () => {
    const { registry } = hub;
    const handlers: Record<string, { id: string; plugin: string; scope: 'global' | 'own_tools' }[]> = {};
    for (const h of registry.handlers) {
      handlers[h.stage] ??= [];
      handlers[h.stage]!.push({ id: h.id, plugin: h.plugin, scope: h.scope });
    }
    return {
      tools: [...registry.tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        parameters: t.parameters,
        owner: t.plugin,
        origin: 'plugin' as const,
        ...(t.access ? { access: t.access } : {}),
      })),
      handlers: handlers as StageHandlers,
      channels: [...registry.channels.values()],
    };
  },
  accessOf: (name) => hub.registry.tools.get(name)?.access,
  callTool: async (call, _signal, origin) => {
    const reply: unknown = await hub.callTool(call.name, call.args, { callId: call.callId, name: call.name, ...origin });
    if (typeof reply === 'string') return { content: reply };
    // Nothing back is an empty result; anything else but { content: string } is the plugin's mistake, said as one.
    if (reply === undefined || reply === null) return { content: '' };
    const { content, isError } = (typeof reply === 'object' ? reply : {}) as { content?: unknown; isError?: unknown };
    if (typeof content !== 'string') {
      const got = Array.isArray(reply) ? 'a list' : typeof reply === 'object' ? 'an object without a string content' : `a ${typeof reply}`;
      return {
        content: `tool '${call.name}' answered ${got}; a tool answers a string or { content: string, isError?: boolean }`,
        isError: true,
      };
    }
    return { content, ...(isError === true ? { isError: true } : {}) };
  },
  runHandler: (input) => hub.runStage(input.handlerId, input.stage, input.context),
});
