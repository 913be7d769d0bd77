/**
 * How `homed` and `waiter` end: the command's exit code (or its error, reported as a user
 * should read it), after stdout and stderr have reached the OS, so `homed log | cat` and a
 * captured pipe get every line. A reader gone early (EPIPE) exits 141 quietly; another write
 * error exits 74 with one line on stderr (see commandOutput.ts).
 */
import { reportError } from './cliErrors.ts';
import { type CommandOutput, EXIT_IO_ERROR, EXIT_PIPE_CLOSED, OutputClosed, OutputFailed } from './commandOutput.ts';

/** The exit code for a write failure; a command's own failure (non-zero) wins over it. */
const exitFor = (program: string, code: number, error: unknown): number => {
  if (code !== 0) return code;
  if (error instanceof OutputClosed) return EXIT_PIPE_CLOSED;
  if (error instanceof OutputFailed) {
    process.stderr.write(`${program}: ${error.message}\n`);
    return EXIT_IO_ERROR;
  }
  return reportError(program, error);
};

const flushStderr = (): Promise<void> => new Promise((resolve) => process.stderr.write('', () => resolve()));

export const runCommand = (program: string, stdout: CommandOutput, command: () => Promise<number>): void => {
  // stderr gone too: there is nobody left to tell, and that must not become a crash.
  process.stderr.on('error', () => undefined);
  void command()
    .then(
      async (code) => {
        try {
          await stdout.flush();
          return code;
        } catch (error) {
          return exitFor(program, code, error);
        }
      },
      async (error: unknown) => {
        const code = exitFor(program, 0, error);
        await stdout.flush().catch(() => undefined);
        return code;
      },
    )
    .then(async (code) => {
      await flushStderr();
      process.exit(code);
    });
};
