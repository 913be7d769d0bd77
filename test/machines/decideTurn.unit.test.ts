/** The turn decider on a stop, given/when/then: the output it records is what the user was already sent of the reply. */
import { describe, expect, it } from 'vitest';
import type { RegisteredTool } from '../../events/index.ts';
import {
  decideTurn,
  EMPTY_TOOLSET,
  initialTurnState,
  type LlmToolCall,
  type Toolset,
  type TurnFact,
  type TurnInputMessage,
  type TurnState,
  type TurnStopReason,
  TURN_RULES,
} from '../../machines/turn/index.ts';

type Data<T extends TurnInputMessage['type']> = Extract<TurnInputMessage, { type: T }>['data'];

let at = 0;
const message = <T extends TurnInputMessage['type']>(type: T, data: Data<T>): TurnInputMessage =>
  ({ type, data, at: ++at }) as TurnInputMessage;

const request = (rules: number | null = TURN_RULES): TurnInputMessage =>
  message('TurnRequested', {
    turnId: 't1',
    input: 'tell me a story',
    model: 'm',
    maxRounds: 4,
    toolset: 'ts',
    ...(rules === null ? {} : { rules }),
  });
const chunk = (round: number, index: number, text: string) => message('LlmChunkRecorded', { round, index, text });
const answered = (round: number, text: string, toolCalls: LlmToolCall[] = []) =>
  message('LlmAnswerRecorded', { round, answer: { text, toolCalls, finishReason: toolCalls.length ? 'tool_calls' : 'stop' } });
const stop = (reason: TurnStopReason = 'stop') => message('TurnStopRequested', { reason });

const READ: RegisteredTool = { name: 'files_read', owner: 'files', origin: 'plugin', description: 'reads', parameters: { type: 'object' } };
/** A before_output handler holds the model's text until it had its say: nothing streams. */
const HELD: Toolset = { ...EMPTY_TOOLSET, handlers: { before_output: [{ id: 'fmt', plugin: 'fmt', scope: 'global' }] } };

const given = (toolset: Toolset, ...messages: TurnInputMessage[]): TurnState =>
  messages.reduce((state, m) => decideTurn(state, m).state, initialTurnState(toolset));
const when = (state: TurnState, m: TurnInputMessage) => decideTurn(state, m);
const outputOf = (facts: readonly TurnFact[]) => facts.find((f) => f.type === 'OutputSent')?.data;

describe('decideTurn: a stop', () => {
  it('mid-stream records the pieces already sent as the output, marked as streamed', () => {
    const streaming = given(EMPTY_TOOLSET, request(), chunk(0, 0, 'Once upon '), chunk(0, 1, 'a time'));
    const { facts } = when(streaming, stop());
    expect(facts).toEqual([
      { type: 'TurnCancelled', data: { during: 'llm', reason: 'stop' } },
      { type: 'OutputSent', data: { text: 'Once upon a time', kind: 'cancelled', streamed: true } },
      { type: 'TurnCompleted', data: { outcome: 'cancelled', rounds: 0 } },
    ]);
  });

  it('of a turn begun under rules 1 (an older log) records an empty output, as it was recorded then', () => {
    const streaming = given(EMPTY_TOOLSET, request(null), chunk(0, 0, 'Once upon '), chunk(0, 1, 'a time'));
    expect(outputOf(when(streaming, stop()).facts)).toEqual({ text: '', kind: 'cancelled', streamed: false });
  });

  it('before any piece was recorded records an empty output', () => {
    const { facts } = when(given(EMPTY_TOOLSET, request()), stop());
    expect(outputOf(facts)).toEqual({ text: '', kind: 'cancelled', streamed: false });
  });

  it('of a held round records nothing sent: its pieces never reached the user', () => {
    const held = given(HELD, request(), chunk(0, 0, 'Once upon '));
    expect(outputOf(when(held, stop()).facts)).toEqual({ text: '', kind: 'cancelled', streamed: false });
  });

  it('while a tool runs records the round’s whole answer, which reached the user when it was recorded', () => {
    const running = given(
      { ...EMPTY_TOOLSET, tools: [READ] },
      request(),
      chunk(0, 0, 'Let me '),
      answered(0, 'Let me look.', [{ id: 'c1', name: 'files_read', arguments: {} }]),
    );
    expect(running.phase).toBe('tools');
    expect(outputOf(when(running, stop()).facts)).toEqual({ text: 'Let me look.', kind: 'cancelled', streamed: true });
  });

  it('in a later round records only that round’s pieces, as the answer would', () => {
    const second = given(
      { ...EMPTY_TOOLSET, tools: [READ] },
      request(),
      answered(0, 'Let me look.', [{ id: 'c1', name: 'files_read', arguments: {} }]),
      message('ToolResultRecorded', { callId: 'c1', name: 'files_read', content: 'a file' }),
      chunk(1, 0, 'It says'),
    );
    expect(outputOf(when(second, stop()).facts)).toEqual({ text: 'It says', kind: 'cancelled', streamed: true });
  });

  it('by a preemption records the pieces sent too (the task runs again; what was sent stays sent)', () => {
    const streaming = given(EMPTY_TOOLSET, request(), chunk(0, 0, 'Roses are red'));
    expect(outputOf(when(streaming, stop('preempted')).facts)).toEqual({ text: 'Roses are red', kind: 'preempted', streamed: true });
  });

  it('puts the sent text in the state the runner hands to memory', () => {
    const { state } = when(given(EMPTY_TOOLSET, request(), chunk(0, 0, 'Once upon')), stop());
    expect(state.output).toEqual({ text: 'Once upon', kind: 'cancelled' });
    expect(state.outcome).toBe('cancelled');
  });
});
