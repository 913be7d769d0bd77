/**
 * What a command prints goes through here: text is written in order, a long listing waits for
 * the reader (`drained`), a reader that went away or a failed write is noticed and stops the
 * command, and everything written reaches the OS before the process exits (`flush`).
 * Exit status on a write error: EPIPE (the reader, e.g. `head`, closed the pipe) exits 141
 * quietly, as a program killed by SIGPIPE does; any other write error exits 74 (EX_IOERR)
 * with one line on stderr.
 */
import type { Writable } from 'node:stream';
import { HologramError } from '../events/errors.ts';

export const EXIT_PIPE_CLOSED = 141;
export const EXIT_IO_ERROR = 74;

/** The reader of the output went away (EPIPE): nothing more can be delivered, and nobody to tell. */
export class OutputClosed extends HologramError {
  readonly code = 'OUTPUT_CLOSED';
  constructor(options?: { cause?: unknown }) {
    super('the reader of the output closed it (EPIPE)', options);
  }
}

/** Writing the output failed (a full disk, an I/O error). */
export class OutputFailed extends HologramError {
  readonly code = 'OUTPUT_FAILED';
  constructor(error: NodeJS.ErrnoException) {
    // Node's message starts with the code already ('ENOSPC: no space left on device, write').
    const why = error.code && !error.message.startsWith(error.code) ? `${error.code}: ${error.message}` : error.message;
    super(`cannot write the output (${why}); free the disk or choose another destination`, {
      cause: error,
    });
  }
}

export type OutputError = OutputClosed | OutputFailed;

export class CommandOutput {
  private failure: OutputError | undefined;
  private readonly waiting = new Set<(error: OutputError) => void>();

  constructor(private readonly stream: Writable) {
    stream.on('error', (error: NodeJS.ErrnoException) => this.fail(error));
  }

  /** Writes text; once a write failed it throws that failure, so a command stops producing output nobody gets. */
  readonly write = (text: string): void => {
    if (this.failure) throw this.failure;
    try {
      this.stream.write(text);
    } catch (error) {
      // A file or TTY is written synchronously: its error comes back here, not as an event.
      throw this.fail(error as NodeJS.ErrnoException);
    }
  };

  /** Writes a line. */
  readonly line = (text: string): void => this.write(`${text}\n`);

  /** The failure, once a write failed. */
  get error(): OutputError | undefined {
    return this.failure;
  }

  /** Resolves once the reader has taken enough that writing more buffers nothing; rejects on a write error. */
  drained(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.stream.writableNeedDrain) return Promise.resolve();
    return this.until((done) => this.stream.once('drain', done));
  }

  /** Resolves once everything written has reached the OS; rejects on a write error. */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    // A write that fails calls back (with its error, or for the writes after it a generic one)
    // before the stream emits 'error': the stream's own error is the one to report.
    return this.until((done) => this.stream.write('', (error) => done(error ? (this.stream.errored ?? error) : undefined)));
  }

  /** Rejects when a write fails: for commands that wait rather than write (`homed log --follow`). */
  failed(): Promise<never> {
    return new Promise((_resolve, reject) => {
      if (this.failure) reject(this.failure);
      else this.waiting.add(reject);
    });
  }

  private until(start: (done: (error?: Error) => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onFailure = (error: OutputError) => reject(error);
      this.waiting.add(onFailure);
      start((error) => {
        this.waiting.delete(onFailure);
        if (error) reject(this.fail(error as NodeJS.ErrnoException));
        else if (this.failure) reject(this.failure);
        else resolve();
      });
    });
  }

  private fail(error: NodeJS.ErrnoException): OutputError {
    this.failure ??= error.code === 'EPIPE' ? new OutputClosed({ cause: error }) : new OutputFailed(error);
    for (const reject of [...this.waiting]) reject(this.failure);
    this.waiting.clear();
    return this.failure;
  }
}
