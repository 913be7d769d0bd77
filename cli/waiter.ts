/**
 * `waiter`: the command-line client of a running homed, over the cli plugin's socket. It
 * sends a message and streams the reply (Ctrl-C stops it), presses stop, or lists tools and
 * plugins; without a message it is a chat session (interactiveWaiter.ts).
 */
import { userInfo } from 'node:os';
import { HologramError } from '../events/errors.ts';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { UsageError } from './cliErrors.ts';
import { CommandOutput } from './commandOutput.ts';
import { DaemonRefused } from './daemonErrors.ts';
import { runCommand } from './runCommand.ts';
import { defaultDataDir } from './defaultDataDir.ts';
import { formatPlugins } from './formatPlugins.ts';
import { InteractiveWaiter } from './interactiveWaiter.ts';
import type { CliReply } from '../plugins/builtin/cli/cliWire.ts';

export const WAITER_HELP = `Usage: waiter [--data DIR] [message ...]
       waiter [--data DIR] --stop | --tools | --plugins

The command-line client of a running homed (it talks to the cli plugin's socket, DIR/homed.sock).

  waiter "what time is it?"   send a message, stream the reply, exit when it is complete
  waiter                      interactive: each line is a message; /help lists the commands
                              (/stop, /tools, /plugins, /quit); Ctrl-C stops a streaming reply
  --stop                      stop the running task and cancel the waiting ones
  --tools                     list the tools the model can call, with their plugins
  --plugins                   list the plugins with their state, restarts and registrations
  --data DIR                  the data dir (default: $HOLOGRAM_DATA, else .hologram/ in the checkout)
  -h, --help                  this help

A message is at most 1 MiB (a longer one is refused before it is sent).

Exit status:
  0    done
  1    the reply was not an answer (the model failed, a round limit, every tool denied, a stop),
       or the daemon refused the request, is not running, cannot be reached or the connection
       to it was lost: one line on stderr says which, and what to do
  2    bad usage: the line says which argument
  70   an unexpected failure (a bug): the trace is printed; please report it
  74   the output could not be written (a full disk, an I/O error): one line on stderr
  141  the reader of the output went away (waiter ... | head): nothing more is printed
`;

const stdout = new CommandOutput(process.stdout);
const out = stdout.write;

const printTools = (tools: readonly { name: string; plugin: string; description: string }[]) => {
  if (tools.length === 0) out('no tools registered\n');
  for (const t of tools) out(`${t.name.padEnd(28)} ${t.plugin.padEnd(12)} ${t.description}\n`);
};

export class ReplyFailed extends HologramError {
  readonly code = 'REPLY_FAILED';
}

/** How a reply that is not an answer ends waiter (exit 1, with this line on stderr). */
const NOT_AN_ANSWER: Readonly<Record<string, string>> = {
  round_limit: 'the turn stopped at its tool-round limit (llm.maxRounds in settings.json) before a final answer',
  denied: 'every tool call the model made was denied',
  cancelled: 'the turn was stopped before it finished',
};

/**
 * Sends one message and streams its reply until the end; a reply that is not an answer rejects
 * with why. Replies for other inputs (a reminder for the same user) are left out. Ctrl-C stops
 * this message's task (and only it); a second Ctrl-C leaves at once.
 */
const converse = (client: CliClient, text: string): Promise<void> =>
  new Promise((resolve, reject) => {
    let streamed = false;
    let inputId: string | undefined;
    let interrupted = false;
    /** Replies that came before `accepted` said which input is ours. */
    const early: CliReply[] = [];
    const settle = (error?: unknown) => {
      off();
      offClose();
      process.off('SIGINT', onInterrupt);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onInterrupt = () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      process.stderr.write('waiter: stopping (Ctrl-C again to leave at once)\n');
      if (inputId !== undefined) client.send({ type: 'cancel', inputId });
    };
    const onOwnReply = (reply: CliReply) => {
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
      }
    };
    const onReply = (reply: CliReply) => {
      if (reply.type === 'error') return settle(new DaemonRefused(reply.message));
      if (reply.type === 'accepted') {
        inputId = reply.inputId;
        if (interrupted) client.send({ type: 'cancel', inputId });
        for (const held of early.splice(0)) if (!('inputId' in held) || held.inputId === inputId) onOwnReply(held);
        return;
      }
      if (reply.type !== 'chunk' && reply.type !== 'end' && reply.type !== 'message') return;
      if (inputId === undefined && 'inputId' in reply && reply.inputId !== undefined) early.push(reply);
      else if (!('inputId' in reply) || reply.inputId === undefined || reply.inputId === inputId) onOwnReply(reply);
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
    process.on('SIGINT', onInterrupt);
    try {
      client.send({ type: 'message', text, from: userInfo().username });
    } catch (error) {
      settle(error);
    }
  });

export const waiter = async (argv: string[]): Promise<number> => {
  const { values, positionals } = parse(
    argv,
    {
      data: { type: 'string' },
      stop: { type: 'boolean' },
      tools: { type: 'boolean' },
      plugins: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (values.help) {
    out(WAITER_HELP);
    return 0;
  }
  const modes = [values.stop, values.tools, values.plugins, positionals.length > 0].filter(Boolean).length;
  if (modes > 1) throw new UsageError('give one of: a message, --stop, --tools, --plugins');
  const client = await CliClient.connect(values.data ?? defaultDataDir());
  try {
    if (values.stop) await client.ask({ type: 'stop' }, replyOfType('stopped')).then(() => out('stopped\n'));
    else if (values.tools) printTools((await client.ask({ type: 'tools' }, replyOfType('tools'))).tools);
    else if (values.plugins) out(formatPlugins((await client.ask({ type: 'plugins' }, replyOfType('plugins'))).plugins));
    else if (positionals.length > 0) await converse(client, positionals.join(' '));
    else {
      const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
      const session = new InteractiveWaiter({
        dataDir: values.data ?? defaultDataDir(),
        user: userInfo().username,
        input: process.stdin,
        stdout,
        terminal,
        columns: () => process.stdout.columns ?? 80,
        warn: (line) => process.stderr.write(`${line}\n`),
        connect: (dir) => CliClient.connect(dir),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      });
      return await session.run(client);
    }
  } finally {
    client.close();
  }
  return 0;
};

runCommand('waiter', stdout, () => waiter(process.argv.slice(2)));
