/**
 * The SDK's entry point for a subprocess plugin: connects to the kernel over this process's
 * stdin/stdout, says hello, and hands `main` a `PluginApi`. The process exits when the kernel
 * closes stdin or says bye, so a plugin never outlives its kernel.
 *
 * @example
 * await runPlugin({ name: 'weather', version: '1.0.0' }, async (api) => {
 *   await api.registerTool({ name: 'weather_now', description: 'Current weather', parameters: { type: 'object', properties: {} } },
 *     () => 'sunny');
 * });
 */
import { MethodNotFound, PluginConnection } from '../protocol/index.ts';
import type {
  ChannelDeliver,
  ChannelDelivery,
  KnowledgeRelation,
  MemoryItem,
  PluginApi,
  PluginEvent,
  StageContext,
  StageHandler,
  StageName,
  ToolHandler,
} from './pluginApi.ts';
import { EVENT_NOTIFY, KernelMethod, LOG_NOTIFY, PluginMethod, READY_NOTIFY } from './wireMethods.ts';

export type PluginIdentity = Readonly<{ name: string; version: string }>;

type P = Record<string, unknown>;

/** Told of each tool, stage handler or channel of the plugin that threw, with what it threw, before the kernel hears of it. */
export type HandlerFailed = (what: string, error: unknown) => void;

export const connectPlugin = async (
  identity: PluginIdentity,
  connection: PluginConnection,
  main: (api: PluginApi) => void | Promise<void>,
  failed: HandlerFailed = () => undefined,
): Promise<PluginApi> => {
  const tools = new Map<string, ToolHandler>();
  const stages = new Map<string, StageHandler>();
  const channels = new Map<string, ChannelDeliver>();
  const listeners: { types: readonly string[]; listener: (event: PluginEvent) => void }[] = [];
  /** What `run` gives back; what it throws is said through `failed` (the author's own bug: its stack says where) and thrown on. */
  const ran = async <T>(what: string, run: () => T | Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      failed(what, error);
      throw error;
    }
  };
  connection.onRequest(async (method, params) => {
    const p = (params ?? {}) as P;
    switch (method) {
      case PluginMethod.callTool: {
        const handler = tools.get(String(p.name));
        if (!handler) throw Object.assign(new Error(`this plugin has no tool '${String(p.name)}'`), { code: 'NO_SUCH_TOOL' });
        return ran(`tool '${String(p.name)}'`, () =>
          handler((p.args ?? {}) as Record<string, unknown>, { callId: String(p.callId), name: String(p.name) }),
        );
      }
      case PluginMethod.runStage: {
        const handler = stages.get(String(p.handlerId));
        if (!handler)
          throw Object.assign(new Error(`this plugin has no stage handler '${String(p.handlerId)}'`), { code: 'NO_SUCH_HANDLER' });
        return ran(
          `stage handler '${String(p.handlerId)}'`,
          async () => (await handler(p.context as StageContext, p.stage as StageName)) ?? null,
        );
      }
      case PluginMethod.deliver: {
        const delivery = p as unknown as ChannelDelivery;
        const deliver = channels.get(delivery.channel);
        if (!deliver) throw Object.assign(new Error(`this plugin has no channel '${delivery.channel}'`), { code: 'NO_SUCH_CHANNEL' });
        await ran(`channel '${delivery.channel}'`, () => deliver(delivery));
        return null;
      }
      default:
        throw new MethodNotFound(method);
    }
  });
  connection.onNotify((method, params) => {
    if (method !== EVENT_NOTIFY) return;
    const event = params as PluginEvent;
    for (const { types, listener } of listeners) if (types.includes(event.type)) listener(event);
  });
  await connection.sayHello({ plugin: identity.name, version: identity.version });
  const api: PluginApi = {
    name: identity.name,
    registerTool: async (spec, handler) => {
      tools.set(spec.name, handler);
      await connection.request(KernelMethod.registerTool, spec);
    },
    registerStage: async (spec, handler) => {
      const { handlerId } = (await connection.request(KernelMethod.registerStage, spec)) as { handlerId: string };
      stages.set(handlerId, handler);
    },
    registerOutputChannel: async (spec, deliver) => {
      channels.set(spec.name, deliver);
      await connection.request(KernelMethod.registerChannel, spec);
    },
    subscribe: async (types, listener) => {
      listeners.push({ types, listener });
      await connection.request(KernelMethod.subscribe, { types });
    },
    injectInput: async (input) =>
      (await connection.request(KernelMethod.injectInput, input)) as Awaited<ReturnType<PluginApi['injectInput']>>,
    injectInterrupt: async (input, level) =>
      (await connection.request(KernelMethod.injectInterrupt, { ...input, level })) as Awaited<ReturnType<PluginApi['injectInterrupt']>>,
    setting: (key) => connection.request(KernelMethod.setting, { key }),
    memory: {
      recall: async (query, k) => (await connection.request(KernelMethod.memoryRecall, { query, k })) as MemoryItem[],
      commit: async (triples, sentence) =>
        (await connection.request(KernelMethod.memoryCommit, { triples, sentence })) as { relationIds: string[] },
    },
    knowledge: {
      query: async (entity, depth) => (await connection.request(KernelMethod.knowledgeQuery, { entity, depth })) as KnowledgeRelation[],
    },
    log: (line) => {
      if (!connection.closed) connection.notify(LOG_NOTIFY, { line });
    },
  };
  await main(api);
  connection.notify(READY_NOTIFY, null);
  return api;
};

/** `console.log`, `info` and `debug` write to stderr, as `console.error` does: stdout carries the protocol's frames alone. */
const consoleToStderr = (): void => {
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
};

// In a plugin homed started (it sets the instance marker), from the first line of the plugin's own
// code on: an import runs before it, and a plugin printed at its top level, before runPlugin.
if (process.env.HOLOGRAM_PLUGIN_INSTANCE !== undefined) consoleToStderr();

/**
 * Runs `main` as a plugin of the kernel that spawned this process; exits when the kernel lets go.
 * stdout carries the protocol's frames alone: `console.log`, `info` and `debug` write to stderr,
 * as `console.error` does (a line printed to stdout broke the framing and ended the plugin), and
 * what a tool, stage handler or channel throws is written there with its stack; homed shows
 * both, each line as `plugin NAME (stderr): …`.
 */
export const runPlugin = async (identity: PluginIdentity, main: (api: PluginApi) => void | Promise<void>): Promise<PluginApi> => {
  consoleToStderr();
  const connection = new PluginConnection(process.stdin, process.stdout, { endOnClose: false });
  connection.on('close', () => process.exit(0));
  connection.on('protocolError', (error) => process.stderr.write(`${identity.name}: ${error.code}: ${error.message}\n`));
  return connectPlugin(identity, connection, main, (what, error) =>
    process.stderr.write(`${identity.name}: ${what} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
  );
};
