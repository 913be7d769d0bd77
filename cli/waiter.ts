/**
 * `waiter`: the command-line client of a running homed, over the cli plugin's socket. It
 * sends a message and streams the reply (Ctrl-C stops it), presses stop, or lists tools and
 * plugins; without a message it is a chat session (interactiveWaiter.ts).
 */
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { type AnswerApproval, type ApprovalDecision, converse as converseWith, ReplyFailed } from './converse.ts';
import { answerApproval, APPROVAL_ID, argumentLines } from './approvals.ts';
import { UsageError } from './cliErrors.ts';
import { CommandOutput } from './commandOutput.ts';
import { runCommand } from './runCommand.ts';
import { systemTimers } from '../actors/clock/systemClock.ts';
import { dataDirFrom } from './defaultDataDir.ts';
import { formatPlugins, formatTools } from './listings.ts';
import { InteractiveWaiter } from './interactiveWaiter.ts';
import { versionLine } from './version.ts';

/** A chat session's commands given as a one-shot message: what to run instead (sent to the model, each was a mistake). */
const ONE_SHOT_COMMANDS: ReadonlyMap<string, string> = new Map([
  ['/stop', 'run waiter --stop'],
  ['/tools', 'run waiter --tools'],
  ['/plugins', 'run waiter --plugins'],
  ['/approvals', 'run waiter (a chat session) and type /approvals'],
  ['/approve', 'run waiter --approve ID (a chat session lists the waiting calls with /approvals)'],
  ['/deny', 'run waiter --deny ID [reason]'],
  ['/help', 'run waiter --help'],
  ['/quit', 'there is no session to quit'],
]);

export const WAITER_HELP = `Usage: waiter [--data DIR] [message ...]
       waiter [--data DIR] --stop | --tools | --plugins | --approve ID | --deny ID [reason ...]

The command-line client of a running homed (it talks to the cli plugin's socket, DIR/homed.sock).

  waiter "what time is it?"   send a message, stream the reply, exit when it is complete; when a
                              call of the reply waits for your approval, you are asked (at a
                              terminal), else it is left waiting and waiter exits 1 saying how
                              to answer it
  waiter                      interactive: each line is a message; /help lists the commands
                              (/stop, /tools, /plugins, /approvals, /approve, /deny, /quit);
                              Ctrl-C stops a streaming reply
  --stop                      stop the running task, cancel the waiting ones and stop the replies
                              waiting for approval (it says what there was)
  --tools                     list the tools the model can call, with their plugins
  --plugins                   list the plugins with their state, restarts and registrations
  --approve ID, --deny ID     answer a tool call waiting for your approval (a reason may follow
                              --deny); a chat session's /approvals lists the waiting calls
  --data DIR                  the data dir (default: $HOLOGRAM_DATA, else .hologram/ in the checkout)
  -h, --help                  this help
  --version                   print waiter's version

A message is at most 1 MiB (a longer one is refused before it is sent).

Exit status:
  0    done
  1    the reply was not an answer (the model failed, a round limit, every tool denied, your message
       withheld by the security review, a stop),
       or the daemon refused the request, is not running, cannot be reached or the connection
       to it was lost: one line on stderr says which, and what to do
  2    bad usage: the line says which argument
  70   an unexpected failure (a bug): the trace is printed; please report it
  74   the output could not be written (a full disk, an I/O error): one line on stderr
  141  the reader of the output went away (waiter ... | head): nothing more is printed
`;

const stdout = new CommandOutput(process.stdout);
const out = stdout.write;

export { ReplyFailed };

/** Signals that end a one-shot waiter without a person at its terminal (closed, or asked to end): they stop its task too. */
const UNATTENDED_ENDS: readonly NodeJS.Signals[] = ['SIGHUP', 'SIGTERM'];

/**
 * The one-shot conversation, printing to stdout (shared with `homed chat`: cli/converse.ts).
 * Ctrl-C stops this message's task (and only it); a second Ctrl-C leaves at once. A closed
 * terminal (SIGHUP) or SIGTERM stops the task as well, without a word (no one may be reading),
 * rather than leave it answering into other sessions.
 */
const converse = async (client: CliClient, text: string, answer?: AnswerApproval): Promise<void> => {
  const stop = new AbortController();
  const onInterrupt = () => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write('\nwaiter: stopping (Ctrl-C again to leave at once)\n');
    stop.abort();
  };
  const onEnd = () => {
    if (stop.signal.aborted) process.exit(143);
    stop.abort();
  };
  process.on('SIGINT', onInterrupt);
  for (const signal of UNATTENDED_ENDS) process.on(signal, onEnd);
  try {
    await converseWith(client, text, out, stop.signal, answer);
  } finally {
    process.off('SIGINT', onInterrupt);
    for (const signal of UNATTENDED_ENDS) process.off(signal, onEnd);
  }
};

/**
 * Asks the person at the terminal about a call waiting for approval: y (or /approve), n (or
 * /deny) with a reason after it, Enter to leave it waiting; Ctrl-C stops the message.
 */
const askAtTerminal: AnswerApproval = ({ approval, name, args }) =>
  new Promise<ApprovalDecision>((resolve) => {
    // The call whole, right above its question: the notices of a reply's calls may all have come before the first question.
    process.stderr.write(`${approval} wants to run ${name} with:\n${argumentLines(args).join('\n') || '    (no arguments)'}\n`);
    const prompt = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let decided = false;
    const decide = (decision: ApprovalDecision) => {
      if (decided) return;
      decided = true;
      prompt.close();
      resolve(decision);
    };
    prompt.on('SIGINT', () => decide('stop'));
    prompt.on('close', () => decide('leave'));
    prompt.question(`Run it? y, n [reason], or Enter to leave it waiting (${approval}): `, (line) => {
      const [word = '', ...rest] = line.trim().split(/\s+/);
      const reason = rest.join(' ');
      if (/^(?:y|yes|\/approve)$/i.test(word)) decide({ approved: true });
      else if (/^(?:n|no|\/deny)$/i.test(word)) decide({ approved: false, ...(reason ? { reason } : {}) });
      else decide('leave');
    });
  });

export const waiter = async (argv: string[]): Promise<number> => {
  const { values, positionals } = parse(
    argv,
    {
      data: { type: 'string' },
      stop: { type: 'boolean' },
      tools: { type: 'boolean' },
      plugins: { type: 'boolean' },
      approve: { type: 'string' },
      deny: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
    true,
  );
  if (values.help) {
    out(WAITER_HELP);
    return 0;
  }
  if (values.version) {
    out(`${versionLine('waiter')}\n`);
    return 0;
  }
  const answering = values.approve ?? values.deny;
  if (values.approve !== undefined && positionals.length > 0) throw new UsageError('--approve takes an id and nothing after it');
  if (answering !== undefined && !APPROVAL_ID.test(answering)) {
    throw new UsageError(`'${answering}' is not an approval id (as 'eb853b-1.1'); a chat session lists the waiting calls with /approvals`);
  }
  const message = positionals.join(' ');
  if (answering === undefined && positionals.length > 0 && message.trim() === '') {
    throw new UsageError('the message is empty; give the text to send');
  }
  const firstWord = message.trim().split(/\s+/)[0] ?? '';
  const asCommand = answering === undefined ? ONE_SHOT_COMMANDS.get(firstWord) : undefined;
  if (asCommand !== undefined) throw new UsageError(`'${firstWord}' is a command of the chat session, not a message; ${asCommand}`);
  const modes = [
    values.stop,
    values.tools,
    values.plugins,
    values.approve !== undefined,
    values.deny !== undefined,
    answering === undefined && positionals.length > 0,
  ].filter(Boolean).length;
  if (modes > 1) throw new UsageError('give one of: a message, --stop, --tools, --plugins, --approve ID, --deny ID');
  const dataDir = dataDirFrom(values.data);
  const forTerminal = Boolean(process.stdout.isTTY);
  const client = await CliClient.connect(dataDir, { forTerminal });
  try {
    if (values.stop) await client.ask({ type: 'stop' }, replyOfType('stopped')).then((stopped) => out(`${stopNote(stopped)}\n`));
    else if (values.tools) out(formatTools((await client.ask({ type: 'tools' }, replyOfType('tools'))).tools));
    else if (values.plugins) out(formatPlugins((await client.ask({ type: 'plugins' }, replyOfType('plugins'))).plugins));
    else if (answering !== undefined) {
      out(`${(await answerApproval(client, values.approve !== undefined, [answering, ...positionals])).said}\n`);
    } else if (positionals.length > 0) await converse(client, message, process.stdin.isTTY ? askAtTerminal : undefined);
    else {
      const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
      const session = new InteractiveWaiter({
        dataDir,
        user: userInfo().username,
        input: process.stdin,
        output: process.stdout,
        stdout,
        terminal,
        columns: () => process.stdout.columns ?? 80,
        warn: (line) => process.stderr.write(`${line}\n`),
        connect: (dir) => CliClient.connect(dir, { forTerminal }),
        sleep: (ms) => new Promise((resolve) => systemTimers.setTimer(resolve, ms)),
      });
      return await session.run(client);
    }
  } finally {
    client.close();
  }
  return 0;
};

runCommand('waiter', stdout, () => waiter(process.argv.slice(2)));

/** What `waiter --stop` says it did. */
const stopNote = ({ running, waiting, parked }: Readonly<{ running?: boolean; waiting?: number; parked?: number }>): string => {
  const counted = (n: number | undefined, one: string, many: string): string => (n ? `${n} ${n === 1 ? one : many}` : '');
  const done = [
    counted(waiting, 'waiting message cancelled', 'waiting messages cancelled'),
    counted(parked, 'reply waiting for approval stopped', 'replies waiting for approval stopped'),
  ].filter(Boolean);
  if (running) return ['stopped the running task', ...done].join('; ');
  return done.join('; ') || 'nothing was running or waiting';
};
