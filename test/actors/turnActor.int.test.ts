/** A journaled turn against the local LLM server: it sends through an output channel, records every result, and replays. */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderChain } from '../../actors/llm/providerChain.ts';
import { emptyOutputState, foldOutput, type Delivery } from '../../actors/output/outputDeliveries.ts';
import { replayTurn } from '../../actors/turn/replayTurn.ts';
import { TurnActor } from '../../actors/turn/turnActor.ts';
import { modelEffects } from '../../actors/turn/turnEffects.ts';
import { ToolsetLedger, toolsetId } from '../../actors/turn/toolsets.ts';
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import { createDefaultCatalog, InMemoryEventStore, SequentialIds, TOOLSET_STREAM, VirtualClock } from '../../events/index.ts';
import { Capability, type Toolset } from '../../machines/turn/index.ts';
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

  it("does not replay a turn whose toolset's firewall part was edited: its content no longer hashes to its id", async () => {
    const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds());
    const toolset = { tools: [], handlers: {}, channels: [], secrets: [{ name: 'BANK_TOKEN', tools: ['files_write'] }] };
    const id = toolsetId(toolset);
    expect((await replayOver(store, id, toolset)).divergence).toBeNull();
    const edited = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds());
    const replayed = await replayOver(edited, id, { ...toolset, secrets: [{ name: 'BANK_TOKEN', tools: ['*'] }] });
    expect(replayed.divergence).toMatchObject({ actual: { data: { note: 'its content does not hash to its id' } } });
  });
});

/** A turn that answers at once, over a toolset recorded under `id` with `content`; its replay. */
const replayOver = async (store: InMemoryEventStore, id: string, content: Toolset) => {
  await store.append(TOOLSET_STREAM, [{ type: 'ToolsetRecorded', data: { toolset: id, ...content, tools: [], channels: [] } as never }]);
  const turn = new TurnActor({
    store,
    stream: 'turn-1',
    toolset: content,
    effects: {
      complete: async () => ({ text: 'hi', toolCalls: [], finishReason: 'stop' }),
      callTool: async () => ({ content: 'no' }),
      runHandler: async () => null,
    },
    clock: new VirtualClock(0),
    timers: createManualTimers(),
  });
  await turn.start({ turnId: '1', input: 'hello', model: 'm', maxRounds: 2, toolset: id });
  await turn.done;
  await turn.settled();
  return replayTurn(store, 'turn-1');
};
