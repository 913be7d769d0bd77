/**
 * The chat's fold of a turn's events: a call that waited for approval and ran, a refused call,
 * content review's note, the answer as sent, a failure shown as one, a stopped turn, and turns
 * of several streams told apart, a message the model sent to a channel on its own, and a
 * message that waits for its turn (queued, told so, stopped before it started) until the turn comes.
 */
import { describe, expect, it } from 'vitest';
import {
  foldTurns,
  foldWaiting,
  inputSourceOf,
  isFailure,
  isOver,
  type LoggedEvent,
  senderOf,
  type WaitingInput,
} from '../../plugins/builtin/webui/app/chatFold.ts';

let seq = 0;
const at = (stream: string, type: string, data: unknown): LoggedEvent => ({ seq: ++seq, stream, type, at: 1_000 + seq, data });
const requested = (stream: string, input: string, conversation = 'webui:owner') =>
  at(stream, 'TurnRequested', { turnId: stream.slice(5), taskId: `task-${stream}`, input, origin: { conversation } });

describe('the chat fold', () => {
  it('shows a call waiting for approval, then running and done, and the answer as sent', () => {
    const [turn] = foldTurns([
      requested('turn-a', 'write it'),
      at('turn-a', 'ApprovalRequested', { approval: 'a-1.1', callId: 'c1', name: 'files_write', args: { path: 'x' }, reason: 'asked' }),
    ]);
    expect(turn!.tools).toEqual([
      { callId: 'c1', name: 'files_write', args: { path: 'x' }, status: 'awaiting_approval', approval: 'a-1.1', note: 'asked' },
    ]);
    expect(isOver(turn!)).toBe(false);
    const [done] = foldTurns([
      requested('turn-a', 'write it'),
      at('turn-a', 'ApprovalRequested', { approval: 'a-1.1', callId: 'c1', name: 'files_write', args: { path: 'x' }, reason: 'asked' }),
      at('turn-a', 'ToolCalled', { callId: 'c1', name: 'files_write', owner: 'files', args: { path: 'x' } }),
      at('turn-a', 'ToolResultRecorded', { callId: 'c1', name: 'files_write', content: 'wrote 1 byte' }),
      at('turn-a', 'OutputSent', { text: 'Done.', kind: 'answer', streamed: false }),
      at('turn-a', 'TurnCompleted', { outcome: 'answered', rounds: 1 }),
    ]);
    expect(done!.tools[0]).toMatchObject({ status: 'done', result: 'wrote 1 byte' });
    // Approved and run, why it waited is no longer a note (it read as an error beside 'done').
    expect(done!.tools[0]!.note).toBeUndefined();
    expect(done!.answer).toEqual({ text: 'Done.', kind: 'answer' });
    expect([isOver(done!), isFailure(done!)]).toEqual([true, false]);
  });

  it("shows a call a person refused as not approved, with their reason, not as a stage's denial", () => {
    const [turn] = foldTurns([
      requested('turn-d', 'write it'),
      at('turn-d', 'ApprovalRequested', { approval: 'd-1.1', callId: 'c1', name: 'files_write', args: { path: 'x' }, reason: 'asked' }),
      at('turn-d', 'ToolCallDenied', { callId: 'c1', name: 'files_write', handlerId: 'approval', reason: 'owner refused it: not today' }),
      at('turn-d', 'ToolCallDenied', { callId: 'c2', name: 'files_write', handlerId: 'gatekeeper-1', reason: 'no writes on Sunday' }),
    ]);
    expect(turn!.tools.map((t) => [t.status, t.note])).toEqual([
      ['refused_by_person', 'owner refused it: not today'],
      ['denied', 'no writes on Sunday'],
    ]);
  });

  it('shows a call that waited for approval when its reply was stopped as not run, waiting no more', () => {
    const [turn] = foldTurns([
      requested('turn-s', 'write it'),
      at('turn-s', 'ApprovalRequested', { approval: 's-1.1', callId: 'c1', name: 'files_write', args: { path: 'x' }, reason: 'asked' }),
      at('turn-s', 'TurnCancelled', { during: 'tools', reason: 'stop' }),
    ]);
    expect(turn!.tools[0]).toMatchObject({ status: 'denied', note: 'not run: the reply was stopped while it waited for approval' });
    expect(isOver(turn!)).toBe(true);
  });

  it('says why a call was refused or flagged, and shows a failure as a failure', () => {
    const [turn] = foldTurns([
      requested('turn-b', 'read the vault'),
      at('turn-b', 'ToolCalled', { callId: 'c1', name: 'files_read', owner: 'files', args: {} }),
      at('turn-b', 'ToolResultRecorded', {
        callId: 'c1',
        name: 'files_read',
        content: 'Refused',
        isError: true,
        refused: 'the vault is private',
      }),
      at('turn-b', 'ToolCalled', { callId: 'c2', name: 'web_fetch', owner: 'web', args: {} }),
      at('turn-b', 'ToolResultRecorded', {
        callId: 'c2',
        name: 'web_fetch',
        content: '[Blocked]',
        findings: [{ rule: 'injection.instruction', count: 1 }],
        blocked: true,
      }),
      at('turn-b', 'OutputSent', { text: 'The model could not be reached', kind: 'failed', streamed: false }),
      at('turn-b', 'TurnCompleted', { outcome: 'failed', rounds: 1 }),
    ]);
    expect(turn!.tools.map((t) => [t.status, t.note])).toEqual([
      ['refused', 'the vault is private'],
      ['done', 'flagged by content review: injection.instruction (withheld)'],
    ]);
    expect(isFailure(turn!)).toBe(true);
  });

  it('keeps turns of different streams apart, ignores other streams, and marks a stopped turn', () => {
    const turns = foldTurns([
      requested('turn-c', 'first'),
      requested('turn-d', 'second', 'cli:root'),
      at('scheduler', 'TaskStarted', { taskId: 'x' }),
      at('turn-c', 'TurnCancelled', { during: 'llm', reason: 'stop' }),
      at('turn-e', 'OutputSent', { text: 'orphan', kind: 'answer', streamed: false }),
    ]);
    expect(turns.map((t) => [t.input, t.conversation, t.outcome])).toEqual([
      ['first', 'webui:owner', 'cancelled'],
      ['second', 'cli:root', undefined],
    ]);
  });

  it('shows what the model sent to a channel on its own as a message, not as a tool call', () => {
    const [turn] = foldTurns([
      requested('turn-s', 'tell the web'),
      at('turn-s', 'ToolCalled', { callId: 's1', name: 'output_send__webui', owner: 'kernel', args: { payload: 'Heads up!' } }),
      at('turn-s', 'ToolResultRecorded', { callId: 's1', name: 'output_send__webui', content: 'sent' }),
      at('turn-s', 'OutputSent', { text: 'Told them.', kind: 'answer', streamed: false }),
    ]);
    expect(turn!.sent).toEqual([{ callId: 's1', channel: 'webui', text: 'Heads up!' }]);
    expect(turn!.tools).toEqual([]);
  });

  it('keeps a message that waits for its turn, says when it is queued or stopped, and gives way to its turn', () => {
    const arrive = (id: string, text: string, conversation: string, resume?: unknown) =>
      at('scheduler', 'InputDelivered', {
        message: { type: 'input.arrive', at: 1, input: { id, payload: { text, conversation, ...(resume ? { resume } : {}) } } },
      });
    const waiting = new Map<string, WaitingInput>();
    for (const event of [
      arrive('in-1', 'first', 'webui:owner'),
      arrive('in-2', 'second', 'webui:owner'),
      arrive('in-3', 'elsewhere', 'cli:ada'),
      arrive('in-4', 'yes', 'webui:owner', { turn: 't', approval: 'a', approved: true, by: 'owner' }),
      at('scheduler', 'BacklogAcknowledged', { inputIds: ['in-1', 'in-2'] }),
      at('scheduler', 'StopRequested', { runningTaskId: null, cancelBudget: ['in-2'] }),
    ])
      foldWaiting(waiting, 'webui:owner', event);
    expect([...waiting.values()].map((w) => [w.inputId, w.text, w.queued, w.cancelled, w.ended])).toEqual([
      ['in-1', 'first', true, false, undefined],
      ['in-2', 'second', true, true, undefined],
    ]);
    foldWaiting(waiting, 'webui:owner', at('scheduler', 'InputShortCircuited', { inputId: 'in-2' }));
    expect(waiting.get('in-2')?.ended).toBe('stopped before it started');
    foldWaiting(waiting, 'webui:owner', requested('turn-w', 'first'));
    expect(waiting.has('in-1'), 'the turn is not task-in-1 yet').toBe(true);
    foldWaiting(waiting, 'webui:owner', at('turn-w', 'TurnRequested', { turnId: 'w', taskId: 'in-1', input: 'first' }));
    expect([...waiting.keys()]).toEqual(['in-2']);
  });

  it("labels a message by who sent it: the person at the cli or the page is 'you', a reminder is the timer's", () => {
    const arrival = at('scheduler', 'InputDelivered', { message: { type: 'input.arrive', at: 1, input: { id: 'in-9', source: 'timer' } } });
    expect(inputSourceOf(arrival)).toEqual(['in-9', 'timer']);
    expect(inputSourceOf(at('scheduler', 'InputDelivered', { message: { type: 'tick', at: 1 } }))).toBeUndefined();
    expect([senderOf('webui'), senderOf('cli'), senderOf(undefined), senderOf('timer')]).toEqual(['you', 'you', 'you', 'timer']);
  });
});
