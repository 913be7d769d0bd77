/** How the command-line tools fail: a usage error, or a typed error with a clear message. */
import { HologramError } from '../events/errors.ts';

export class UsageError extends HologramError {
  readonly code = 'USAGE';
  /** The command whose `--help` shows the usage this error is about (`homed log`); the program's when unset. */
  command?: string;
}

/** The person stopped the command (Ctrl-C at a prompt): said in one line, exit 130 as for SIGINT. */
export class Cancelled extends HologramError {
  readonly code = 'CANCELLED';
}

/** Prints an error the way a user should see it and returns the exit code. */
export const reportError = (program: string, error: unknown): number => {
  if (error instanceof Cancelled) {
    process.stderr.write(`${program}: ${error.message}\n`);
    return 130;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`${program}: ${error.message}\nRun '${error.command ?? program} --help' for usage.\n`);
    return 2;
  }
  if (error instanceof HologramError || typeof (error as { code?: unknown } | undefined)?.code === 'string') {
    process.stderr.write(`${program}: ${(error as Error).message}\n`);
    return 1;
  }
  process.stderr.write(
    `${program}: unexpected failure (a bug; please report it with this trace):\n${(error as Error)?.stack ?? String(error)}\n`,
  );
  return 70;
};
