/**
 * A subprocess plugin as a remote actor: its requests over the connection become hub calls
 * (and so events), and the hub reaches it through an endpoint that sends requests back.
 * Whatever the plugin sends, the kernel answers or logs it; nothing it sends can throw here.
 */
import { DEFAULT_STAGE_TIMEOUT_MS } from '../../actors/index.ts';
import type { PluginConnection, PluginProtocolError } from '../protocol/index.ts';
import { MethodNotFound } from '../protocol/index.ts';
import type { ChannelDelivery, InjectedInput, StageChange, StageSpec, ToolReply, ToolSpec, ChannelSpec, Triple } from '../sdk/pluginApi.ts';
import { EVENT_NOTIFY, KernelMethod, LOG_NOTIFY, PluginMethod, READY_NOTIFY } from '../sdk/wireMethods.ts';
import type { PluginEndpoint, PluginHub } from './pluginHub.ts';
import type { PluginConsole } from './pluginConsole.ts';

export type RemoteTimeouts = Readonly<{ toolMs: number; stageMs: number; deliverMs: number }>;

/** Stage calls wait as long as the turn's stage timeout, which ends them anyway. */
export const DEFAULT_REMOTE_TIMEOUTS: RemoteTimeouts = { toolMs: 60_000, stageMs: DEFAULT_STAGE_TIMEOUT_MS, deliverMs: 10_000 };

type P = Record<string, unknown>;

const asObject = (value: unknown): P => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as P) : {});

/** Serves the plugin's requests against the hub, and reports its protocol errors. */
export const servePlugin = (hub: PluginHub, plugin: string, connection: PluginConnection, say: PluginConsole): { ready: Promise<void> } => {
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  connection.onRequest(async (method, params) => {
    const p = asObject(params);
    switch (method) {
      case KernelMethod.registerTool:
        return hub.registerTool(plugin, p as unknown as ToolSpec).then(() => null);
      case KernelMethod.registerStage:
        return { handlerId: await hub.registerStage(plugin, p as unknown as StageSpec) };
      case KernelMethod.registerChannel:
        return hub.registerChannel(plugin, p as unknown as ChannelSpec).then(() => null);
      case KernelMethod.subscribe:
        return hub.subscribe(plugin, p.types as string[]).then(() => null);
      case KernelMethod.injectInput:
        return hub.injectInput(plugin, p as unknown as InjectedInput);
      case KernelMethod.injectInterrupt:
        return hub.injectInterrupt(plugin, p as unknown as InjectedInput, p.level as number);
      case KernelMethod.setting:
        return hub.setting(plugin, (p.key ?? '') as string) ?? null;
      case KernelMethod.memoryRecall:
        return hub.recallMemory(plugin, p.query as string, p.k as number | undefined);
      case KernelMethod.memoryCommit:
        return { relationIds: await hub.commitMemory(plugin, p.triples as Triple[], p.sentence as string | undefined) };
      case KernelMethod.knowledgeQuery:
        return hub.queryKnowledge(plugin, p.entity as string, p.depth as number | undefined);
      default:
        void hub.misbehaved(plugin, 'METHOD_NOT_FOUND', `called unknown kernel method '${method}'`).catch(() => undefined);
        throw new MethodNotFound(method);
    }
  });
  connection.onNotify((method, params) => {
    // One line of homed's output, as a stderr line is: a plugin forges no 'homed:' line and drives no terminal.
    if (method === LOG_NOTIFY) say('', String(asObject(params).line ?? params));
    else if (method === READY_NOTIFY) markReady();
    else void hub.misbehaved(plugin, 'UNKNOWN_NOTIFY', `sent unknown notification '${method}'`).catch(() => undefined);
  });
  connection.on('protocolError', (error: PluginProtocolError) => {
    void hub.misbehaved(plugin, error.code, error.message).catch(() => undefined);
  });
  return { ready };
};

/** How the hub reaches a subprocess plugin. */
export const remoteEndpoint = (connection: PluginConnection, timeouts: RemoteTimeouts = DEFAULT_REMOTE_TIMEOUTS): PluginEndpoint => ({
  callTool: async (name, args, call) =>
    (await connection.request(PluginMethod.callTool, { name, args, callId: call.callId }, { timeoutMs: timeouts.toolMs })) as ToolReply,
  runStage: async (handlerId, stage, context) =>
    (await connection.request(PluginMethod.runStage, { handlerId, stage, context }, { timeoutMs: timeouts.stageMs })) as StageChange | null,
  deliver: async (delivery: ChannelDelivery) => {
    await connection.request(PluginMethod.deliver, delivery, { timeoutMs: timeouts.deliverMs });
  },
  event: (event) => {
    if (!connection.closed) connection.notify(EVENT_NOTIFY, event);
  },
});
