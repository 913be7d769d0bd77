/** A journaled turn against the local LLM server: it sends through an output channel, records every result, and replays. */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderChain } from '../../actors/llm/providerChain.ts';
import { emptyOutputState, foldOutput, type Delivery } from '../../actors/output/outputDeliveries.ts';
import { replayTurn } from '../../actors/turn/replayTurn.ts';
import { TurnActor } from '../../actors/turn/turnActor.ts';
import { modelEffects } from '../../actors/turn/turnEffects.ts';
import { ToolsetLedger } from '../../actors/turn/toolsets.ts';
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import { createDefaultCatalog, InMemoryEventStore, SequentialIds, VirtualClock } from '../../events/index.ts';
import { Capability } from '../../machines/turn/index.ts';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const servers: LlmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('a turn over HTTP with output channels', () => {
  it('offers output_send__{name} tools, decides their results, leaves the send to the output, and replays', async () => {
    const server = await startLlmServer([
      {
        toolCalls: [
          { id: 'c1', name: 'output_send__cli_help', arguments: {} },
          { id: 'c2', name: 'output_send__cli', arguments: { payload: 'Hello there', type: 'text' } },
        ],
      },
      { toolCalls: [{ id: 'c3', name: 'output_send__cli', arguments: { payload: 'a picture', type: 'image' } }] },
      { text: 'Done.' },
    ]);
    servers.push(server);
    const clock = new VirtualClock(0);
    const store = new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds());
    const chain = new ProviderChain([
      new HttpProvider({ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm' }),
    ]);
    const toolset = { tools: [], handlers: {}, channels: [{ name: 'cli', owner: 'cli', capabilities: Capability.text, metaDoc: '' }] };
    const turn = new TurnActor({
      store,
      stream: 'turn-1',
      toolset,
      effects: { ...modelEffects({ chain, model: 'm' }), callTool: async () => ({ content: 'no' }), runHandler: async () => null },
      clock,
      timers: createManualTimers(),
    });
    await turn.start({ turnId: '1', input: 'greet me', model: 'm', maxRounds: 8, toolset: await new ToolsetLedger(store).record(toolset) });
    expect(await turn.done).toBe('answered');
    await turn.settled();
    const tools = (server.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    expect(tools).toEqual(['output_send__cli', 'output_send__cli_help']);
    const events = await store.readAll();
    const completed = events.filter((e) => e.type === 'ToolCompleted').map((e) => e.data);
    expect(completed).toEqual([
      { callId: 'c1', name: 'output_send__cli_help', result: "Channel 'cli' accepts type 'text'.\nmeta: no routing metadata; send {}" },
      { callId: 'c2', name: 'output_send__cli', result: "sent to 'cli'" },
      {
        callId: 'c3',
        name: 'output_send__cli',
        result: "type must be one of text on channel 'cli'",
        error: "type must be one of text on channel 'cli'",
      },
    ]);
    // What reaches the channel is folded from the committed events: the one valid send.
    const output = emptyOutputState();
    const delivered: Delivery[] = events.flatMap((e) => foldOutput(output, e));
    expect(delivered.filter((d) => d.kind === 'message')).toEqual([
      { route: { channel: 'cli', target: null }, kind: 'message', text: 'Hello there' },
    ]);
    await server.close();
    servers.splice(0);
    expect((await replayTurn(store, 'turn-1')).divergence).toBeNull();
  });
});
