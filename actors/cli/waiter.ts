/**
 * `waiter`: the command-line client of a running homed. It talks to the cli plugin's Unix
 * socket, which arrives with the plugin host; until then it says so instead of pretending.
 */
const HELP = `Usage: waiter [message]

The command-line client of a running homed: sends a message and streams the reply.
Not available yet: it needs the built-in cli plugin (a Unix socket in the data dir),
which comes with the plugin host.
`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
process.stderr.write(`waiter: no cli plugin to talk to yet; this build of homed has no plugin host.\n${HELP}`);
process.exit(69);
