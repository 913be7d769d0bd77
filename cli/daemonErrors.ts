/**
 * How a client of the cli socket (waiter, `homed plugins`) says that it could not talk to the
 * daemon: one line naming the data dir, what went wrong and what to do, never a stack trace.
 */
import { HologramError } from '../events/errors.ts';

/** Nothing listens on the data dir's socket (ENOENT, ECONNREFUSED). */
export class DaemonNotRunning extends HologramError {
  readonly code = 'DAEMON_NOT_RUNNING';
  constructor(dataDir: string, why: string) {
    super(`no homed is running on ${dataDir} (${why}); start it with 'homed run --data ${dataDir}'`);
  }
}

/** The socket is there but this client cannot reach it (permissions, descriptors, a full queue). */
export class DaemonUnreachable extends HologramError {
  readonly code = 'DAEMON_UNREACHABLE';
}

/** The connection broke before the answer was complete (EPIPE, ECONNRESET, an early close). */
export class DaemonConnectionLost extends HologramError {
  readonly code = 'DAEMON_CONNECTION_LOST';
  constructor(dataDir: string, why: string) {
    super(
      `the connection to homed on ${dataDir} was lost before its answer was complete (${why}); ` +
        `check that it still runs ('homed plugins --data ${dataDir}' says) and what it printed, then try again`,
    );
  }
}

/** The daemon answered with an error (a refused request, or it is busy). */
export class DaemonRefused extends HologramError {
  readonly code = 'DAEMON_REFUSED';
}

/** A failed connect, as the error a user should read. */
export const connectError = (dataDir: string, socketPath: string, error: NodeJS.ErrnoException): HologramError => {
  switch (error.code) {
    case 'ENOENT':
      return new DaemonNotRunning(dataDir, `${socketPath} does not exist`);
    case 'ECONNREFUSED':
      return new DaemonNotRunning(dataDir, `${socketPath} refuses connections: a homed that stopped without removing it`);
    case 'ENOTSOCK':
      return new DaemonNotRunning(dataDir, `${socketPath} is not a socket`);
    case 'EACCES':
    case 'EPERM':
      return new DaemonUnreachable(
        `cannot connect to homed on ${dataDir}: permission denied on ${socketPath}; run waiter as the user that runs homed`,
      );
    case 'EMFILE':
    case 'ENFILE':
      return new DaemonUnreachable(
        `cannot connect to homed on ${dataDir}: too many open files (${error.code}); close some programs or raise the limit (ulimit -n), then try again`,
      );
    case 'EAGAIN':
      return new DaemonUnreachable(
        `homed on ${dataDir} is not accepting connections right now (EAGAIN: its queue of waiting connections is full); try again in a moment`,
      );
    default:
      return new DaemonUnreachable(`cannot connect to homed on ${dataDir} through ${socketPath} (${error.code ?? error.message})`);
  }
};
