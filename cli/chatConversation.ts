/**
 * One `homed chat` message over a cli socket (a running daemon's, or the one chat's own kernel
 * opened), with Ctrl-C: the first interrupt stops this message's task (no other) and the reply
 * ends as stopped (exit 130); a second stops waiting for the reply. Every other outcome is
 * `converse`'s, shared with waiter: an answer exits 0, anything else rejects with one line.
 */
import type { CliClient } from './cliClient.ts';
import type { CommandOutput } from './commandOutput.ts';
import { converse, ReplyFailed } from './converse.ts';

/** The exit status of a chat stopped with Ctrl-C (128 + SIGINT). */
export const EXIT_STOPPED = 130;

/** Where a chat's interrupts come from: the process (an emitter in tests). */
export type Interrupts = Readonly<{
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}>;

export type ChatConversation = Readonly<{
  client: CliClient;
  text: string;
  output: CommandOutput;
  /** The signals that stop the turn: SIGINT through a daemon; SIGINT and SIGTERM in chat's own kernel. */
  signals: readonly NodeJS.Signals[];
  interrupts?: Interrupts;
}>;

const stoppedLine = () => process.stderr.write('homed: stopped\n');

/** Sends the message and streams the reply; resolves with the exit status, rejects with why the reply was not an answer. */
export const chatOver = async ({ client, text, output, signals, interrupts = process }: ChatConversation): Promise<number> => {
  const stop = new AbortController();
  let giveUp!: () => void;
  const gaveUp = new Promise<'gave up'>((resolve) => (giveUp = () => resolve('gave up')));
  const onInterrupt = () => {
    if (stop.signal.aborted) {
      giveUp();
      return;
    }
    stop.abort();
  };
  for (const signal of signals) interrupts.on(signal, onInterrupt);
  try {
    const conversation = converse(client, text, output.write, stop.signal).then(() => 'answered' as const);
    conversation.catch(() => undefined); // given up on, it may still end: nobody waits for it then
    const ended = await Promise.race([conversation, gaveUp]);
    if (ended === 'gave up') {
      stoppedLine();
      return EXIT_STOPPED;
    }
    return 0;
  } catch (error) {
    if (stop.signal.aborted && error instanceof ReplyFailed) {
      stoppedLine();
      return EXIT_STOPPED;
    }
    throw error;
  } finally {
    for (const signal of signals) interrupts.off(signal, onInterrupt);
  }
};
