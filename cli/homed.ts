/** `homed`: the Hologram daemon and its maintenance commands. */
import { parse, positiveInteger } from './args.ts';
import { DEFAULT_INSPECT_HOST, DEFAULT_INSPECT_PORT } from '../actors/inspect/startInspector.ts';
import { UsageError } from './cliErrors.ts';
import { CommandOutput } from './commandOutput.ts';
import { runCommand } from './runCommand.ts';
import { dataDirFrom, defaultDataDir, makeCreatedFilesPrivate } from './dataDir.ts';
import { CHAT_HELP, chatCommand } from './chatCommand.ts';
import { graphCommand, GRAPH_HELP } from './graphCommand.ts';
import { INIT_HELP, initCommand } from './initCommand.ts';
import { LOG_HELP, logCommand } from './logCommand.ts';
import { REPLAY_HELP, replayCommand } from './replayCommand.ts';
import { closeInheritedDescriptors } from './inheritedDescriptors.ts';
import { runDaemon } from './runDaemon.ts';
import { PLUGINS_HELP, pluginsCommand } from './pluginsCommand.ts';
import { SECRET_HELP, secretCommand } from './secretCommand.ts';
import { versionLine } from './version.ts';
import { closestNames } from '../events/closestNames.ts';

const COMMANDS = ['init', 'run', 'log', 'replay', 'graph', 'chat', 'plugins', 'secret'];

export const HOMED_HELP = `Usage: homed [command] [options]

Hologram's daemon. Every state change is an event in the data dir's log (DIR/events.db);
read models are projections rebuilt from it. While it runs, talk to it with waiter (waiter --help)
or in the browser: it prints the web UI's URL with its token at start (plugins.webui.port, 8080).

Commands:
  init            set up the model: asks, probes the server, writes settings.json (homed init --help)
  run (default)   start the daemon: homed [run] [--data DIR] [--inspect [--inspect-port N] [--inspect-host H]]
  log             print events as JSON lines (homed log --help)
  replay          rebuild projections from the log; --verify, --until SEQ (homed replay --help)
  graph           print the kernel's module layers
  chat            send one message, stream the reply: the daemon's turn, through it or in process (homed chat --help)
  plugins         list plugins; enable|disable|reload|start|stop NAME (homed plugins --help)
  secret          the credential vault: set NAME (value on stdin), list, rm NAME (homed secret --help)

Options:
  --inspect       relay every machine (kernel, modules, scheduler) to the Stately inspector:
                  open http://127.0.0.1:4242 in a browser (--inspect-port N to change the port).
                  It listens on 127.0.0.1 only; --inspect-host H (e.g. 0.0.0.0) exposes it to
                  whoever can reach H, who then sees every machine's events
  --data DIR      the data dir (default: $HOLOGRAM_DATA, else .hologram/ in the Hologram checkout:
                  ${defaultDataDir()})
  -h, --help      this help
  --version       print homed's version

Exit status:
  0    done
  1    an error: one line on stderr says what was wrong and what to do
  2    bad usage: the line says which argument
  70   an unexpected failure (a bug): the trace is printed; please report it
  74   the output could not be written (a full disk, an I/O error): one line on stderr
  130  homed chat stopped with Ctrl-C
  141  the reader of the output went away (homed log | head): nothing more is printed
Every command writes all of its output before it exits, however slowly it is read.

Details:
${INIT_HELP}
${LOG_HELP}
${REPLAY_HELP}
${GRAPH_HELP}
${CHAT_HELP}
${PLUGINS_HELP}

${SECRET_HELP}`;

export const RUN_HELP = `Usage: homed [run] [--data DIR] [--inspect [--inspect-port N] [--inspect-host H]]

Starts the daemon on the data dir and runs until Ctrl-C or SIGTERM, which stop it with every
acknowledged event on disk. One daemon per data dir: a second is refused with the first one's pid.
It prints "homed: ready" once clients can talk to it (waiter, over DIR/homed.sock) and the web
UI's URL with its token; everything it does is in the log (homed log).

Options:
  --data DIR        the data dir (default: $HOLOGRAM_DATA, else ${defaultDataDir()})
  --inspect         relay every machine to the Stately inspector on http://127.0.0.1:4242
  --inspect-port N  the inspector's port instead of 4242
  --inspect-host H  listen on H instead of 127.0.0.1 (whoever reaches H sees every machine's events)
  -h, --help        this help (homed --help: every command)`;

const stdout = new CommandOutput(process.stdout);
const write = stdout.line;

/** Runs `homed COMMAND`: a usage error points at that command's help, a few lines, not all of `homed --help`. */
const helpOf = async (command: string, run: () => number | Promise<number>): Promise<number> => {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UsageError) error.command ??= `homed ${command}`;
    throw error;
  }
};

export const main = async (argv: string[]): Promise<number> => {
  makeCreatedFilesPrivate();
  const [first, ...rest] = argv;
  switch (first) {
    case 'init':
      return helpOf('init', () => initCommand(rest, write));
    case 'log':
      return helpOf('log', () => logCommand(rest, stdout));
    case 'replay':
      return helpOf('replay', () => replayCommand(rest, write));
    case 'graph':
      return helpOf('graph', () => graphCommand(rest, write));
    case 'chat':
      return helpOf('chat', () => chatCommand(rest, stdout));
    case 'plugins':
      return helpOf('plugins', () => pluginsCommand(rest, write));
    case 'secret':
      return helpOf('secret', () => secretCommand(rest, write));
    case 'help':
      write(HOMED_HELP);
      return 0;
    default: {
      const args = first === 'run' ? rest : argv;
      if (first !== undefined && first !== 'run' && !first.startsWith('-')) {
        const [near] = closestNames(first, COMMANDS, 1);
        throw new UsageError(`unknown command '${first}'${near ? `; did you mean ${near}?` : ''} (commands: ${COMMANDS.join(', ')})`);
      }
      const { values } = parse(args, {
        data: { type: 'string' },
        inspect: { type: 'boolean' },
        'inspect-port': { type: 'string' },
        'inspect-host': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      });
      if (values.help) {
        write(first === 'run' ? RUN_HELP : HOMED_HELP);
        return 0;
      }
      if (values.version) {
        write(versionLine('homed'));
        return 0;
      }
      const port = positiveInteger('inspect-port', values['inspect-port']);
      const inspecting = values.inspect || port !== undefined || values['inspect-host'] !== undefined;
      const inspectPort = inspecting ? (port ?? DEFAULT_INSPECT_PORT) : undefined;
      if (port !== undefined && port > 65_535) throw new UsageError(`--inspect-port must be a port number (0–65535), got ${port}`);
      // What started homed may have left descriptors open that every plugin would inherit; nothing to tell the owner.
      closeInheritedDescriptors();
      return runDaemon({
        dataDir: dataDirFrom(values.data),
        ...(inspectPort !== undefined ? { inspectPort, inspectHost: values['inspect-host'] ?? DEFAULT_INSPECT_HOST } : {}),
        // The daemon goes on when nobody reads its output any more (its exit status says so later).
        out: (line) => {
          try {
            if (!stdout.error) write(line);
          } catch {
            // the failure is kept in stdout.error; runCommand reports it at exit
          }
        },
      });
    }
  }
};

runCommand('homed', stdout, () => main(process.argv.slice(2)));
