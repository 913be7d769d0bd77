/**
 * What the user receives, folded from committed events: each delivery of a reply names the input
 * it answers, a tool that starts is shown only on a channel that asked for progress, and nothing
 * of the model's stream follows the output that ended the reply.
 */
import { describe, expect, it } from 'vitest';
import { emptyOutputState, foldOutput, learnParkedTurn, resumesUnknownTurn } from '../../actors/output/outputDeliveries.ts';
import type { Recorded } from '../../events/index.ts';
import { Capability } from '../../machines/turn/index.ts';

let seq = 0;
const event = (stream: string, type: string, data: Record<string, unknown>): Recorded =>
  ({ seq: ++seq, stream, version: seq, id: `e${seq}`, type, schemaVersion: 1, at: 0, causation: null, correlation: null, data }) as never;

/** An input from `channel`, its turn (tools offered through a toolset with that channel), one tool call and the answer. */
const replyWithTool = (channelFlags: number) => {
  const input = { id: 'in-7', payload: { text: 'list my files', replyChannel: 'cli', replyTarget: 'ada/x-s1', conversation: 'cli:ada' } };
  return [
    event('scheduler', 'InputDelivered', { to: 'scheduler', message: { type: 'input.arrive', at: 0, input } }),
    event('turn-in-7', 'ToolsetRecorded', {
      toolset: 'ts1',
      tools: [],
      handlers: [],
      channels: [{ name: 'cli', owner: 'cli', capabilities: channelFlags, metaDoc: '' }],
    }),
    event('turn-in-7', 'TurnRequested', { turnId: 't1', taskId: 'in-7', input: 'list my files', model: 'm', maxRounds: 8, toolset: 'ts1' }),
    event('turn-in-7', 'ToolCalled', { callId: 'c1', name: 'files_list', owner: 'files', args: {} }),
    event('turn-in-7', 'OutputSent', { text: 'Two files.', kind: 'answer', streamed: false }),
  ];
};

describe('deliveries of a reply', () => {
  it('name the input they answer, and show a tool as it starts on a channel with progress', () => {
    const state = emptyOutputState();
    const deliveries = replyWithTool(Capability.text | Capability.progress).flatMap((e) => foldOutput(state, e));
    const route = { channel: 'cli', target: 'ada/x-s1' };
    expect(deliveries).toEqual([
      { route, kind: 'tool', text: 'files_list', inputId: 'in-7' },
      { route, kind: 'chunk', text: 'Two files.', inputId: 'in-7' },
      { route, kind: 'end', text: '', outcome: 'answer', inputId: 'in-7' },
    ]);
  });

  it('leave tools out on a channel that did not ask for progress', () => {
    const state = emptyOutputState();
    const kinds = replyWithTool(Capability.text).flatMap((e) => foldOutput(state, e).map((d) => d.kind));
    expect(kinds).toEqual(['chunk', 'end']);
  });
});

describe('deliveries of a reply parked before this boot', () => {
  const request = event('turn-in-9', 'TurnRequested', {
    turnId: 't9',
    taskId: 'in-9',
    input: 'write it',
    model: 'm',
    maxRounds: 8,
    toolset: '',
    origin: { conversation: 'cli:ada', replyChannel: 'cli', replyTarget: 'ada/old-s1' },
  });
  const answered = event('turn-in-9', 'ApprovalAnswered', { approval: 'a-1.1', approved: true });
  const sent = event('turn-in-9', 'OutputSent', { text: 'Written.', kind: 'answer', streamed: false });

  it("go as the reply of the answer that resumed it, where that answer's reply goes, once its request is learnt", () => {
    const state = emptyOutputState();
    const resume = { turn: 'turn-in-9', approval: 'a-1.1', approved: true };
    const input = { id: 'ans-1', payload: { text: 'approved a-1.1', replyChannel: 'cli', replyTarget: 'ada/new-s2', resume } };
    foldOutput(state, event('scheduler', 'InputDelivered', { to: 'scheduler', message: { type: 'input.arrive', at: 0, input } }));
    // This boot's fold never saw the request: the reply would go nowhere.
    expect(resumesUnknownTurn(state, answered)).toBe(true);
    expect(foldOutput(emptyOutputState(), sent)).toEqual([]);
    learnParkedTurn(state, request);
    expect(resumesUnknownTurn(state, answered)).toBe(false);
    const route = { channel: 'cli', target: 'ada/new-s2' };
    expect([answered, sent].flatMap((e) => foldOutput(state, e))).toEqual([
      { route, kind: 'chunk', text: 'Written.', inputId: 'ans-1' },
      { route, kind: 'end', text: '', outcome: 'answer', inputId: 'ans-1' },
    ]);
  });

  it('go where the turn recorded its replies go when no answer of this boot names it', () => {
    const state = emptyOutputState();
    learnParkedTurn(state, request);
    expect(foldOutput(state, sent)[0]).toMatchObject({ route: { channel: 'cli', target: 'ada/old-s1' }, inputId: 'in-9' });
  });
});

describe('deliveries of a stopped reply', () => {
  it('end with what the output says was sent: a piece journaled after the stop is not delivered', () => {
    const state = emptyOutputState();
    state.streamRoutes.set('turn-s', { channel: 'cli', target: null });
    const deliveries = [
      event('turn-s', 'TurnRequested', { turnId: 's', input: 'tell me a story', model: 'm', maxRounds: 8, toolset: '' }),
      event('turn-s', 'LlmRequested', { round: 0, from: 0, added: [], total: 1, stream: true }),
      event('turn-s', 'LlmChunkRecorded', { round: 0, index: 0, text: 'Once upon' }),
      event('turn-s', 'TurnStopRequested', { reason: 'stop' }),
      event('turn-s', 'TurnCancelled', { during: 'llm', reason: 'stop' }),
      event('turn-s', 'OutputSent', { text: 'Once upon', kind: 'cancelled', streamed: true }),
      event('turn-s', 'LlmChunkRecorded', { round: 0, index: 1, text: ' a time' }),
      event('turn-s', 'TurnCompleted', { outcome: 'cancelled', rounds: 0 }),
    ].flatMap((e) => foldOutput(state, e));
    const route = { channel: 'cli', target: null };
    expect(deliveries).toEqual([
      { route, kind: 'chunk', text: 'Once upon' },
      { route, kind: 'end', text: '(cancelled)', outcome: 'cancelled', stoppedFor: 'stop' },
    ]);
  });
});

describe('deliveries of a refused reply', () => {
  const ending = (events: readonly Recorded[]) => {
    const state = emptyOutputState();
    state.streamRoutes.set('turn-b', { channel: 'cli', target: null });
    return events.flatMap((e) => foldOutput(state, e)).find((d) => d.kind === 'end');
  };
  const flagged = { source: 'input', findings: [{ rule: 'injection.instruction', count: 1 }], blocked: true };

  it('end as blocked when review withheld the input, and as denied when a blocked /deny reason refused the last call', () => {
    const requested = event('turn-b', 'TurnRequested', { turnId: 'b', input: '[Blocked…]', model: 'm', maxRounds: 8, toolset: '' });
    const denied = event('turn-b', 'OutputSent', { text: 'notice', kind: 'denied', streamed: false });
    expect(ending([requested, event('turn-b', 'ContentFlagged', flagged), denied])).toMatchObject({ outcome: 'blocked' });
    const asked = event('turn-b', 'LlmRequested', { round: 0, from: 0, added: [], total: 1, stream: false });
    expect(ending([requested, asked, event('turn-b', 'ContentFlagged', flagged), denied])).toMatchObject({ outcome: 'denied' });
  });
});
