/**
 * `waiter`: the command-line client of a running homed, over the cli plugin's socket. It
 * sends a message and streams the reply, presses stop, or lists tools and plugins; without a
 * message it reads lines from stdin (interactive).
 */
import { createInterface } from 'node:readline';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { converse as converseWith, ReplyFailed } from './converse.ts';
import { UsageError } from './cliErrors.ts';
import { CommandOutput } from './commandOutput.ts';
import { DaemonRefused } from './daemonErrors.ts';
import { runCommand } from './runCommand.ts';
import { defaultDataDir } from './dataDir.ts';
import { formatPlugins } from './pluginsCommand.ts';

export const WAITER_HELP = `Usage: waiter [--data DIR] [message ...]
       waiter [--data DIR] --stop | --tools | --plugins

The command-line client of a running homed (it talks to the cli plugin's socket, DIR/homed.sock).

  waiter "what time is it?"   send a message, stream the reply, exit when it is complete
  waiter                      interactive: each line is a message; /stop, /tools, /plugins, /quit
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

export { ReplyFailed };

/** The one-shot conversation, printing to stdout (shared with `homed chat`: cli/converse.ts). */
const converse = (client: CliClient, text: string): Promise<void> => converseWith(client, text, out);

const interactive = async (client: CliClient): Promise<void> => {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const text = line.trim();
    if (!text) continue;
    if (text === '/quit') break;
    if (text === '/stop') client.send({ type: 'stop' });
    else if (text === '/tools') printTools((await client.ask({ type: 'tools' }, replyOfType('tools'))).tools);
    else if (text === '/plugins') out(formatPlugins((await client.ask({ type: 'plugins' }, replyOfType('plugins'))).plugins));
    else {
      // A failed reply or a refused message is said, and the conversation goes on.
      await converse(client, text).catch((error: unknown) => {
        if (!(error instanceof ReplyFailed || error instanceof DaemonRefused)) throw error;
        process.stderr.write(`waiter: ${error.message}\n`);
      });
    }
  }
};

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
    else await interactive(client);
  } finally {
    client.close();
  }
  return 0;
};

runCommand('waiter', stdout, () => waiter(process.argv.slice(2)));
