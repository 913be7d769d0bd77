/** A journaled turn that sends through an output channel, against the local LLM server, then replayed. */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderChain } from '../../actors/llm/providerChain.ts';
import { replayTurn } from '../../actors/turn/replayTurn.ts';
import { runTurn } from '../../actors/turn/runTurn.ts';
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import { createDefaultCatalog, InMemoryEventStore, SequentialIds, VirtualClock } from '../../events/index.ts';
import { Capability } from '../../machines/turn/index.ts';
import { startLlmServer, type LlmServer } from '../support/llmServer/index.ts';

const servers: LlmServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('runTurn with output channels', () => {
  it('offers output_send__{name} tools, delivers through the pump, records tool results, and replays', async () => {
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
    const store = new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds());
    const delivered: string[] = [];
    const chain = new ProviderChain([
      new HttpProvider({ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm' }),
    ]);
    const { stream, output } = await runTurn({
      store,
      chain,
      model: 'm',
      input: 'greet me',
      channels: [
        {
          channel: { name: 'cli', owner: 'cli', capabilities: Capability.text, metaDoc: '' },
          device: { send: (c) => void delivered.push(c) },
        },
      ],
    });
    expect(output).toMatchObject({ outcome: 'answered', reply: 'Done.' });
    expect(delivered).toEqual(['Hello there']);
    const tools = (server.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    expect(tools).toEqual(['output_send__cli', 'output_send__cli_help']);
    const results = (await store.readStream(stream)).filter((e) => e.type === 'ToolResultRecorded').map((e) => e.data);
    expect(results).toEqual([
      { callId: 'c1', name: 'output_send__cli_help', content: "Channel 'cli' accepts type 'text'.\nmeta: no routing metadata; send {}" },
      { callId: 'c2', name: 'output_send__cli', content: "sent to 'cli'" },
      { callId: 'c3', name: 'output_send__cli', content: "type must be one of text on channel 'cli'", isError: true },
    ]);
    await server.close();
    servers.splice(0);
    expect(await replayTurn(store, stream)).toBeNull();
  });
});
