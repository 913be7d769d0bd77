/**
 * A PluginApi that records what a plugin does with it: tools registered (callable by name),
 * interrupts and inputs injected, log lines. Settings come from a plain object.
 */
import type { InjectedInput, PluginApi, ToolCallInfo, ToolHandler, ToolReply, ToolSpec } from '../../plugins/sdk/pluginApi.ts';

export type InjectedInterrupt = Readonly<{ input: InjectedInput; level: number }>;

export type FakePluginApi = PluginApi & {
  readonly tools: ReadonlyMap<string, { spec: ToolSpec; handler: ToolHandler }>;
  readonly interrupts: InjectedInterrupt[];
  readonly inputs: InjectedInput[];
  readonly logs: string[];
  /** Calls a registered tool; throws when no tool has that name. */
  /** Calls a registered tool; `from` is what a turn adds to the call (its conversation, its reply route). */
  call(name: string, args?: Readonly<Record<string, unknown>>, from?: Omit<ToolCallInfo, 'callId' | 'name'>): Promise<ToolReply>;
  /** Makes the next `count` injectInterrupt calls reject (the kernel refusing them). */
  refuseInterrupts(count: number): void;
};

export const createFakePluginApi = (name: string, settings: Readonly<Record<string, unknown>> = {}): FakePluginApi => {
  const tools = new Map<string, { spec: ToolSpec; handler: ToolHandler }>();
  const interrupts: InjectedInterrupt[] = [];
  const inputs: InjectedInput[] = [];
  const logs: string[] = [];
  let refusals = 0;
  let receipts = 0;
  let calls = 0;
  return {
    name,
    tools,
    interrupts,
    inputs,
    logs,
    async registerTool(spec, handler) {
      if (tools.has(spec.name)) throw new Error(`tool '${spec.name}' registered twice`);
      tools.set(spec.name, { spec, handler });
    },
    async registerStage() {},
    async registerOutputChannel() {},
    async subscribe() {},
    async injectInput(input) {
      inputs.push(input);
      return { inputId: `input-${++receipts}`, level: 0 };
    },
    async injectInterrupt(input, level) {
      if (refusals > 0) {
        refusals -= 1;
        throw new Error('interrupt refused (fake)');
      }
      interrupts.push({ input, level });
      return { inputId: `input-${++receipts}`, level: Math.min(level, 3) };
    },
    async setting(key) {
      return settings[key];
    },
    memory: {
      recall: () => Promise.reject(new Error('the fake PluginApi has no memory')),
      commit: () => Promise.reject(new Error('the fake PluginApi has no memory')),
    },
    knowledge: { query: () => Promise.reject(new Error('the fake PluginApi has no knowledge graph')) },
    log(line) {
      logs.push(line);
    },
    async call(tool, args = {}, from = {}) {
      const registered = tools.get(tool);
      if (registered === undefined) throw new Error(`no tool '${tool}' registered; have ${[...tools.keys()].join(', ')}`);
      return registered.handler(args, { ...from, callId: `call-${++calls}`, name: tool });
    },
    refuseInterrupts(count) {
      refusals = count;
    },
  };
};

/** The text of a tool reply, and whether it was an error. */
export const replyOf = (reply: ToolReply): { content: string; isError: boolean } =>
  typeof reply === 'string' ? { content: reply, isError: false } : { content: reply.content, isError: reply.isError === true };
