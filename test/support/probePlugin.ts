/**
 * A built-in test plugin, on the same PluginApi as any: it raises L3 interrupts the way a
 * plugin does (`api.injectInterrupt`), with their replies on its own channel `probe` (one
 * target per interrupt, recorded like a cli session), and serves `probe_wait`, a tool whose
 * calls wait until the test answers them. It outlives the kernels of one test: each start
 * serves the new kernel, and what the previous one left (held calls, receivers) is let go.
 */
import type { BuiltinPlugin } from '../../plugins/sdk/builtinPlugin.ts';
import type { PluginApi } from '../../plugins/sdk/pluginApi.ts';
import { newReceivedReply, receive, type ReceivedReply } from './receivedReply.ts';

export const PROBE_TOOL = 'probe_wait';
export const PROBE_CHANNEL = 'probe';

export type HeldToolCall = Readonly<{ callId: string; answer(text: string): void }>;

export type ProbePlugin = Readonly<{
  plugin: BuiltinPlugin;
  /** Calls of `probe_wait` the test has not answered, oldest first. */
  readonly held: readonly HeldToolCall[];
  /** Raises an L3 interrupt; its reply is recorded. */
  interrupt(text: string): Promise<ReceivedReply>;
  /** The kernel it serves is gone: forget its calls, and record nothing more for its receivers. */
  letGo(): void;
}>;

export const createProbePlugin = (): ProbePlugin => {
  let api: PluginApi | undefined;
  let held: HeldToolCall[] = [];
  let receivers = new Map<string, ReceivedReply>();
  let nextTarget = 1;
  const letGo = () => {
    api = undefined;
    held = [];
    for (const reply of receivers.values()) reply.gone = true;
    receivers = new Map();
  };
  const plugin: BuiltinPlugin = {
    manifest: {
      name: 'probe',
      version: '1.0.0',
      entry: 'builtin:probe',
      kind: 'builtin',
      platforms: [],
      requires_facilities: [],
      capabilities: ['tools', 'interrupt', 'channels'],
      auto_start: true,
      auto_restart: true,
      description: 'Test plugin: interrupts, a tool the test answers, a channel that records',
    },
    async start(started) {
      letGo();
      const mine = new Map<string, ReceivedReply>();
      receivers = mine;
      await started.registerOutputChannel({ name: PROBE_CHANNEL, capabilities: ['text'] }, (delivery) => {
        const reply = delivery.target ? mine.get(delivery.target) : undefined;
        if (reply) receive(reply, delivery.kind, delivery.text, delivery.outcome);
      });
      await started.registerTool(
        { name: PROBE_TOOL, description: 'Waits for the test to answer', parameters: { type: 'object', properties: {} } },
        (_args, call) =>
          new Promise<string>((resolve) => {
            const entry: HeldToolCall = {
              callId: call.callId,
              answer: (text) => {
                held = held.filter((h) => h !== entry);
                resolve(text);
              },
            };
            held = [...held, entry];
          }),
      );
      api = started;
      return { stop: async () => letGo() };
    },
  };
  return {
    plugin,
    get held() {
      return held;
    },
    async interrupt(text) {
      if (!api) throw new Error('the probe plugin is not running');
      const target = `i${nextTarget++}`;
      const reply = newReceivedReply(`probe ${target} "${text}"`);
      receivers.set(target, reply);
      reply.inputId = (await api.injectInterrupt({ text, replyTo: { channel: PROBE_CHANNEL, target } }, 3)).inputId;
      return reply;
    },
    letGo,
  };
};
