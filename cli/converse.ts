/**
 * One message to a running homed over the cli socket, its reply streamed to `out` until the
 * end: what `waiter "message"` and `homed chat` both do. Replies for other inputs (a reminder
 * for the same user) are left out. Aborting `signal` stops this message's task and no other
 * (the reply then ends as cancelled). A reply that is not an answer (a failure, a round limit,
 * every tool denied, a stop) rejects with `ReplyFailed` saying why, so the command exits 1 with
 * that one line. A call of the reply that waits for a person's approval is put to `answer` (the
 * person at the terminal); without one, or left unanswered, the reply is left waiting in homed and
 * the command ends saying how to answer it (it never waits for an answer no one here can give).
 */
import { userInfo } from 'node:os';
import { HologramError } from '../events/errors.ts';
import type { CliReply } from '../plugins/builtin/cli/cliWire.ts';
import { answerApproval } from './approvals.ts';
import { type CliClient, replyOfType } from './cliClient.ts';
import { DaemonRefused } from './daemonErrors.ts';

export class ReplyFailed extends HologramError {
  readonly code = 'REPLY_FAILED';
}

/** How a reply that is not an answer ends waiter (exit 1, with this line on stderr). */
export const NOT_AN_ANSWER: Readonly<Record<string, string>> = {
  round_limit: 'the turn stopped at its tool-round limit (llm.maxRounds in settings.json) before a final answer',
  denied: 'every tool call the model made was denied',
  blocked: 'the security review withheld your message (security.review.block in settings.json)',
  cancelled: 'the turn was stopped before it finished',
};

type OwnReply = Extract<CliReply, { type: 'chunk' | 'end' | 'message' }>;

/** What the person said of a call waiting for approval: run it, refuse it, leave it waiting, or stop the message. */
export type ApprovalDecision = Readonly<{ approved: boolean; reason?: string }> | 'leave' | 'stop';

/** A call waiting for approval, as the person is asked about it: its id, its tool and its arguments, whole. */
export type WaitingCall = Readonly<{ approval: string; name: string; args: Readonly<Record<string, unknown>> }>;

/** Asks the person about a call waiting for approval. */
export type AnswerApproval = (call: WaitingCall) => Promise<ApprovalDecision>;

/** How a reply left waiting for approval ends the command (exit 1, with this line on stderr). */
export const leftWaiting = (approval: string): string =>
  `the reply waits for your approval of a call (${approval}) and goes on waiting in homed: ` +
  `answer it with 'waiter --approve ${approval}' or 'waiter --deny ${approval} [reason]'`;
const isOwnKind = (reply: CliReply): reply is OwnReply => reply.type === 'chunk' || reply.type === 'end' || reply.type === 'message';

/** Sends one message and streams its reply until the end; a reply that is not an answer rejects with why. */
export const converse = (
  client: CliClient,
  text: string,
  out: (text: string) => void,
  signal?: AbortSignal,
  answer?: AnswerApproval,
): Promise<void> =>
  new Promise((resolve, reject) => {
    let streamed = false;
    /** The calls waiting for approval are put to the person one at a time, in the order they came. */
    let asking: Promise<void> = Promise.resolve();
    let inputId: string | undefined;
    /** Replies that came before `accepted` said which input is ours. */
    const early: OwnReply[] = [];
    const cancel = () => {
      if (inputId !== undefined) client.send({ type: 'cancel', inputId });
    };
    const settle = (error?: unknown) => {
      off();
      offClose();
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onAbort = () => {
      try {
        cancel();
      } catch (error) {
        settle(error);
      }
    };
    const decide = async (approval: string): Promise<void> => {
      if (!answer) return settle(new ReplyFailed(leftWaiting(approval)));
      const { pending } = await client.ask({ type: 'approvals' }, replyOfType('approvals'));
      const call = pending.find((p) => p.approval === approval);
      // Answered or stopped meanwhile (another session): nothing to ask.
      if (call === undefined) return;
      const decision = await answer({ approval, name: call.name, args: call.args ?? {} });
      if (decision === 'leave') return settle(new ReplyFailed(leftWaiting(approval)));
      if (decision === 'stop') return cancel();
      const { said } = await answerApproval(client, decision.approved, [approval, ...(decision.reason ? [decision.reason] : [])]);
      out(`${said}\n`);
    };
    const onOwnReply = (reply: OwnReply) => {
      if (reply.type === 'chunk') {
        streamed = true;
        out(reply.text);
      } else if (reply.type === 'message' && reply.approval !== undefined) {
        const { approval } = reply;
        out(`${streamed ? '\n' : ''}${reply.text}\n`);
        streamed = false;
        asking = asking.then(() => decide(approval)).catch(settle);
      } else if (reply.type === 'message') out(`\n[to cli] ${reply.text}\n`);
      else {
        if (reply.outcome === 'failed') {
          if (streamed) out('\n');
          settle(new ReplyFailed(reply.text));
          return;
        }
        out(`${reply.text ? `${streamed ? '\n' : ''}${reply.text}` : ''}\n`);
        const why =
          reply.stoppedFor === 'shutdown'
            ? 'the turn was stopped before it finished: homed is stopping'
            : reply.outcome === undefined
              ? undefined
              : NOT_AN_ANSWER[reply.outcome];
        settle(why === undefined ? undefined : new ReplyFailed(why));
      }
    };
    const onReply = (reply: CliReply) => {
      if (reply.type === 'error') return settle(new DaemonRefused(reply.message));
      if (reply.type === 'accepted') {
        inputId = reply.inputId;
        if (signal?.aborted) cancel();
        for (const held of early.splice(0)) if (held.inputId === inputId) onOwnReply(held);
        return;
      }
      if (!isOwnKind(reply)) return;
      if (reply.inputId === undefined || reply.inputId === inputId) onOwnReply(reply);
      else if (inputId === undefined) early.push(reply);
    };
    // A write to a closed stdout throws here, inside the socket's data event: it ends the conversation instead.
    const off = client.onReply((reply) => {
      try {
        onReply(reply);
      } catch (error) {
        settle(error);
      }
    });
    const offClose = client.onClose((error) => {
      // The line that says why starts on a line of its own, not after the part of the reply that came.
      if (streamed) out('\n');
      settle(error);
    });
    signal?.addEventListener('abort', onAbort);
    try {
      client.send({ type: 'message', text, from: userInfo().username });
    } catch (error) {
      settle(error);
    }
  });
