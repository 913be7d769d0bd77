/**
 * One message to a running homed over the cli socket, its reply streamed to `out` until the
 * end: what `waiter "message"` and `homed chat` both do. A reply that is not an answer (a
 * failure, a round limit, every tool denied, a stop) rejects with `ReplyFailed` saying why, so
 * the command exits 1 with that one line.
 */
import { userInfo } from 'node:os';
import { HologramError } from '../events/index.ts';
import type { CliReply } from '../plugins/builtin/cli/cliWire.ts';
import type { CliClient } from './cliClient.ts';
import { DaemonRefused } from './daemonErrors.ts';

export class ReplyFailed extends HologramError {
  readonly code = 'REPLY_FAILED';
}

/** How a reply that is not an answer ends waiter (exit 1, with this line on stderr). */
const NOT_AN_ANSWER: Readonly<Record<string, string>> = {
  round_limit: 'the turn stopped at its tool-round limit (llm.maxRounds in settings.json) before a final answer',
  denied: 'every tool call the model made was denied',
  cancelled: 'the turn was stopped before it finished',
};

/** Sends one message and streams its reply until the end; a reply that is not an answer rejects with why. */
export const converse = (client: CliClient, text: string, out: (text: string) => void): Promise<void> =>
  new Promise((resolve, reject) => {
    let streamed = false;
    const settle = (error?: unknown) => {
      off();
      offClose();
      if (error === undefined) resolve();
      else reject(error);
    };
    const onReply = (reply: CliReply) => {
      if (reply.type === 'chunk') {
        streamed = true;
        out(reply.text);
      } else if (reply.type === 'message') out(`\n[to cli] ${reply.text}\n`);
      else if (reply.type === 'end') {
        if (reply.outcome === 'failed') {
          if (streamed) out('\n');
          settle(new ReplyFailed(reply.text));
          return;
        }
        out(`${reply.text ? `${streamed ? '\n' : ''}${reply.text}` : ''}\n`);
        const why = reply.outcome === undefined ? undefined : NOT_AN_ANSWER[reply.outcome];
        settle(why === undefined ? undefined : new ReplyFailed(why));
      } else if (reply.type === 'error') settle(new DaemonRefused(reply.message));
    };
    // A write to a closed stdout throws here, inside the socket's data event: it ends the conversation instead.
    const off = client.onReply((reply) => {
      try {
        onReply(reply);
      } catch (error) {
        settle(error);
      }
    });
    const offClose = client.onClose(settle);
    try {
      client.send({ type: 'message', text, from: userInfo().username });
    } catch (error) {
      settle(error);
    }
  });
