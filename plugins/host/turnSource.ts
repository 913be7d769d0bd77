/** The plugins as a turn sees them: their tools, stage handlers and channels, and how to reach each. */
import type { TurnSource } from '../../actors/turn/turnRunner.ts';
import type { StageName } from '../../machines/stagePipeline/index.ts';
import type { HandlerRef } from '../../machines/stagePipeline/index.ts';
import type { RegisteredTool, StageHandlers, ToolResult } from '../../machines/turn/index.ts';
import type { PluginHub } from './pluginHub.ts';

export const turnSourceOf = (hub: PluginHub): TurnSource => ({
  onInput: (listener) => hub.onInput(listener),
  channels: () => [...hub.registry.channels.values()],
  deliver: (delivery) => hub.deliver(delivery),
  turnPlugins: () => {
    const { registry } = hub;
    const tools: RegisteredTool[] = [...registry.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      owner: t.plugin,
      origin: 'plugin',
    }));
    const handlers: Partial<Record<StageName, HandlerRef[]>> = {};
    for (const h of registry.handlers) {
      handlers[h.stage as StageName] ??= [];
      handlers[h.stage as StageName]!.push({ id: h.id, plugin: h.plugin, scope: h.scope });
    }
    return {
      tools,
      handlers: handlers as StageHandlers,
      callTool: async (call): Promise<ToolResult> => {
        const reply = await hub.callTool(call.name, call.args, { callId: call.callId, name: call.name });
        if (typeof reply === 'string') return { content: reply };
        return { content: String(reply?.content ?? ''), ...(reply?.isError ? { isError: true } : {}) };
      },
      runHandler: (input) => hub.runStage(input.handlerId, input.stage, input.context),
    };
  },
});
