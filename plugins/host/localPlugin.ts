/**
 * A built-in or Lua plugin in the kernel's process: the same `PluginApi` a subprocess plugin
 * gets, its handlers kept here and reached through an endpoint, its registrations made
 * through the hub like anyone's.
 */
import type { ChannelDeliver, PluginApi, PluginEvent, StageHandler, ToolHandler } from '../sdk/pluginApi.ts';
import type { PluginCapability } from '../sdk/wireMethods.ts';
import { PluginUnavailable, type PluginEndpoint, type PluginHub } from './pluginHub.ts';

/** `external`: a Lua script plugin, which gets the narrowed surface like a subprocess one. */
export const attachLocalPlugin = (
  hub: PluginHub,
  plugin: string,
  capabilities: readonly PluginCapability[],
  log: (line: string) => void,
  options: { external?: boolean } = {},
): PluginApi => {
  const tools = new Map<string, ToolHandler>();
  const stages = new Map<string, StageHandler>();
  const channels = new Map<string, ChannelDeliver>();
  const listeners: { types: readonly string[]; listener: (event: PluginEvent) => void }[] = [];
  const endpoint: PluginEndpoint = {
    callTool: async (name, args, call) => {
      const handler = tools.get(name);
      if (!handler) throw new PluginUnavailable(plugin, `tool '${name}'`);
      return handler(args, call);
    },
    runStage: async (handlerId, stage, context) => {
      const handler = stages.get(handlerId);
      if (!handler) throw new PluginUnavailable(plugin, `stage handler '${handlerId}'`);
      return handler(context, stage);
    },
    deliver: async (delivery) => {
      const deliver = channels.get(delivery.channel);
      if (!deliver) throw new PluginUnavailable(plugin, `channel '${delivery.channel}'`);
      await deliver(delivery);
    },
    event: (event) => {
      for (const { types, listener } of listeners) if (types.includes(event.type)) listener(event);
    },
  };
  hub.attach(plugin, capabilities, endpoint, options);
  return {
    name: plugin,
    registerTool: async (spec, handler) => {
      await hub.registerTool(plugin, spec);
      tools.set(spec.name, handler);
    },
    registerStage: async (spec, handler) => {
      stages.set(await hub.registerStage(plugin, spec), handler);
    },
    registerOutputChannel: async (spec, deliver) => {
      await hub.registerChannel(plugin, spec);
      channels.set(spec.name, deliver);
    },
    subscribe: async (types, listener) => {
      await hub.subscribe(plugin, types);
      listeners.push({ types, listener });
    },
    injectInput: (input) => hub.injectInput(plugin, input),
    injectInterrupt: (input, level) => hub.injectInterrupt(plugin, input, level),
    setting: async (key) => hub.setting(plugin, key),
    memory: {
      recall: async (query, k) => hub.recallMemory(plugin, query, k),
      commit: async (triples, sentence) => ({ relationIds: await hub.commitMemory(plugin, triples, sentence) }),
    },
    knowledge: { query: async (entity, depth) => hub.queryKnowledge(plugin, entity, depth) },
    log: (line) => log(`plugin ${plugin}: ${line}`),
  };
};
