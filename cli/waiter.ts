/**
 * `waiter`: the command-line client of a running homed, over the cli plugin's socket. It
 * sends a message and streams the reply, presses stop, or lists tools and plugins; without a
 * message it reads lines from stdin (interactive).
 */
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { HologramError } from '../events/index.ts';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { reportError, UsageError } from './cliErrors.ts';
import { defaultDataDir } from './dataDir.ts';
import { formatPlugins } from './pluginsCommand.ts';
import type { CliReply } from '../plugins/builtin/cli/cliWire.ts';

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

Exit status: 0 done, 1 the reply failed (the reason goes to stderr), the daemon refused or is not running, 2 bad usage.
`;

const out = (text: string) => process.stdout.write(text);

const printTools = (tools: readonly { name: string; plugin: string; description: string }[]) => {
  if (tools.length === 0) out('no tools registered\n');
  for (const t of tools) out(`${t.name.padEnd(28)} ${t.plugin.padEnd(12)} ${t.description}\n`);
};

export class ReplyFailed extends HologramError {
  readonly code = 'REPLY_FAILED';
}

/** Sends one message and streams its reply until the end; a failed turn rejects with why. */
const converse = (client: CliClient, text: string): Promise<void> =>
  new Promise((resolve, reject) => {
    let streamed = false;
    const off = client.onReply((reply: CliReply) => {
      if (reply.type === 'chunk') {
        streamed = true;
        out(reply.text);
      } else if (reply.type === 'message') out(`\n[to cli] ${reply.text}\n`);
      else if (reply.type === 'end') {
        off();
        if (reply.outcome === 'failed') {
          if (streamed) out('\n');
          reject(new ReplyFailed(reply.text));
          return;
        }
        out(`${reply.text ? `${streamed ? '\n' : ''}${reply.text}` : ''}\n`);
        resolve();
      } else if (reply.type === 'error') {
        off();
        reject(new UsageError(reply.message));
      }
    });
    client.onClose(() => reject(new Error('the daemon closed the connection before the reply was complete')));
    client.send({ type: 'message', text, from: userInfo().username });
  });

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
      await converse(client, text).catch((error: unknown) => {
        if (!(error instanceof ReplyFailed)) throw error;
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

waiter(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => process.exit(reportError('waiter', error)),
);
