/**
 * Answering the tool calls that wait for a person, from waiter: `/approve [ID]`, `/deny [ID]
 * [reason]` in a session, `waiter --approve ID` / `--deny ID` once. Without an ID, the one call
 * waiting is meant; with several waiting, the person is shown them and picks.
 */
import type { PendingApprovalSummary } from '../plugins/sdk/builtinPlugin.ts';
import { type CliClient, replyOfType } from './cliClient.ts';
import { DaemonRefused } from './daemonErrors.ts';

/** An approval's id as the turn gives it (`<turn>-<round>.<call>`). */
export const APPROVAL_ID = /^[^\s]+-\d+\.\d+$/;

export const formatApprovals = (pending: readonly PendingApprovalSummary[]): string =>
  pending.length === 0
    ? 'no tool call is waiting for approval'
    : pending.map((p) => [`${p.approval}  ${p.name}  (${p.conversation})`, ...argumentLines(p.args)].join('\n')).join('\n');

/** A value longer than this is shown as its start and its end, with how much lies between (`homed log` has it whole). */
const SHOWN_WHOLE_AT_MOST = 2_000;

/**
 * A call's arguments one to a line, every one of them (a chat line cuts the call short, and a
 * long first argument pushed the path out of sight): what a person approves or refuses.
 */
export const argumentLines = (args: Readonly<Record<string, unknown>> | undefined): string[] =>
  Object.entries(args ?? {}).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const shown =
      text.length <= SHOWN_WHOLE_AT_MOST
        ? text
        : `${text.slice(0, SHOWN_WHOLE_AT_MOST / 2)} … (${(text.length - SHOWN_WHOLE_AT_MOST).toLocaleString('en')} more characters; ` +
          `homed log --type ApprovalRequested has them) … ${text.slice(-SHOWN_WHOLE_AT_MOST / 2)}`;
    return `    ${key}: ${shown.replaceAll('\n', '\n      ')}`;
  });

/** Approves or refuses; `words` are the ID (optional when one call waits) and, for a refusal, the reason. Returns what to tell the person. */
export const answerApproval = async (
  client: Pick<CliClient, 'ask'>,
  approved: boolean,
  words: readonly string[],
): Promise<Readonly<{ approval: string; said: string }>> => {
  const given = words.filter((w) => w !== '');
  const named = given[0] !== undefined && APPROVAL_ID.test(given[0]);
  let approval = named ? given[0] : undefined;
  const reason = named ? given.slice(1) : given;
  if (approved && !named && given.length > 0) {
    throw new DaemonRefused(`'${given[0]}' is not an approval id; /approvals lists the waiting calls`);
  }
  if (approval === undefined) {
    const { pending } = await client.ask({ type: 'approvals' }, replyOfType('approvals'));
    if (pending.length !== 1) {
      throw new DaemonRefused(
        pending.length === 0
          ? 'no tool call is waiting for approval'
          : `${pending.length} calls are waiting; name one: ${pending.map((p) => `${p.approval} (${p.name})`).join(', ')}`,
      );
    }
    approval = pending[0]!.approval;
  }
  const text = reason.join(' ');
  await client.ask({ type: 'approve', approval, approved, ...(text && !approved ? { reason: text } : {}) }, replyOfType('answered'));
  return { approval, said: approved ? `approved ${approval}: it runs now` : `refused ${approval}` };
};
