/**
 * `homed chat` with no daemon on the data dir: boots the daemon's kernel in this process (the
 * same modules: settings, model sources, memory, the built-in and DIR/plugins plugins with
 * their tools, turns, output), under the data dir's lock, sends the message through the cli
 * socket that kernel opened, exactly as waiter talks to a daemon, and stops the kernel in
 * order once the reply ended, so the log replays like a daemon's. SIGINT or SIGTERM stops the
 * turn first; the kernel's stop then always runs to its end.
 */
import { join } from 'node:path';
import { startKernel } from '../actors/kernel/index.ts';
import type { Settings } from '../actors/modules/config.ts';
import { HologramError } from '../events/index.ts';
import { chatOver, EXIT_STOPPED } from './chatConversation.ts';
import { CLI_SOCKET_FILE } from '../plugins/builtin/cli/cliWire.ts';
import { CliClient } from './cliClient.ts';
import type { CommandOutput } from './commandOutput.ts';
import { daemonModules } from './daemonModules.ts';
import { DaemonNotRunning } from './daemonErrors.ts';
import { EVENT_LOG_FILE, openEventLog } from './dataDir.ts';
import { describeHolder, lockDataDir } from './dataDirLock.ts';
import { givenFacilities } from './runDaemon.ts';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** The lock holder's name for chat's own kernel (DIR/homed.pid), which another chat does not take for a daemon. */
export const CHAT_COMMAND = 'homed chat';

/** Chat's own kernel could not carry the message: it stopped on its own (a module failed), or opened no cli socket. */
export class ChatKernelFailed extends HologramError {
  readonly code = 'CHAT_KERNEL_FAILED';
}

export type InProcessChat = Readonly<{ dir: string; overrides: Settings; text: string; output: CommandOutput }>;

export const chatInProcess = async (chat: InProcessChat): Promise<number> => {
  const { dir } = chat;
  // Whoever holds the dir answers no cli socket (chat looked first): a daemon starting or stopping, or another writer.
  const lock = lockDataDir(
    dir,
    CHAT_COMMAND,
    (holder) =>
      `the data dir ${dir} is in use by ${describeHolder(holder)}, whose cli socket does not answer (it is starting or ` +
      'stopping, or it is not a daemon); try again once it is ready (homed chat then talks to it), or once it has stopped',
  );
  try {
    return await chatLocked(chat);
  } finally {
    lock.release();
  }
};

const chatLocked = async ({ dir, overrides, text, output }: InProcessChat): Promise<number> => {
  let phase: 'booting' | 'talking' | 'stopping' = 'booting';
  let interruptBoot!: () => void;
  const interrupted = new Promise<'interrupted'>((resolve) => (interruptBoot = () => resolve('interrupted')));
  let noted = false;
  // Installed for the whole run, so no signal ends the process with the kernel half stopped.
  const onSignal = () => {
    if (phase === 'booting') interruptBoot();
    else if (phase === 'stopping' && !noted) {
      noted = true;
      process.stderr.write(
        'homed: stopping the kernel chat started; the stop goes on (SIGKILL ends it at once, losing nothing acknowledged)\n',
      );
    }
    // while talking, chatOver's own listener stops the turn
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  const store = openEventLog(join(dir, EVENT_LOG_FILE));
  try {
    const kernel = await startKernel({
      store,
      modules: daemonModules(overrides, dir),
      given: givenFacilities(store, dir),
      pid: process.pid,
      dataDir: dir,
      // What a daemon prints as it runs is not the reply: the log holds what happened.
      log: () => undefined,
    });
    const booted = await Promise.race([kernel.ready.then(() => 'ready' as const), interrupted]).catch(async (error: unknown) => {
      await kernel.done.catch(() => undefined);
      throw error;
    });
    if (booted !== 'ready') {
      phase = 'stopping';
      await kernel.stop('homed chat was interrupted while starting');
      process.stderr.write('homed: stopped\n');
      return EXIT_STOPPED;
    }
    phase = 'talking';
    const talked = await talk(dir, text, output, kernel.done).then(
      (code) => ({ code }),
      (error: unknown) => ({ error }),
    );
    phase = 'stopping';
    const stopped = await kernel.stop('homed chat is done');
    if (stopped.failure) {
      throw new ChatKernelFailed(`homed chat's kernel stopped because module '${stopped.failure.module}' failed: ${stopped.failure.error}`);
    }
    if ('error' in talked) throw talked.error;
    return talked.code;
  } finally {
    await store.close();
    for (const signal of SIGNALS) process.off(signal, onSignal);
  }
};

/** The conversation over the socket the kernel just opened; a kernel that stops meanwhile ends it. */
const talk = async (dir: string, text: string, output: CommandOutput, kernelDone: Promise<unknown>): Promise<number> => {
  const client = await CliClient.connect(dir, { forTerminal: Boolean(process.stdout.isTTY) }).catch((error: unknown) => {
    if (!(error instanceof DaemonNotRunning)) throw error;
    throw new ChatKernelFailed(
      `the kernel homed chat started opened no cli socket at ${join(dir, CLI_SOCKET_FILE)}, so the message cannot be sent: ` +
        `is the cli plugin disabled? ('homed plugins --data ${dir}' says)`,
    );
  });
  try {
    const conversation = chatOver({ client, text, output, signals: SIGNALS });
    conversation.catch(() => undefined); // when the kernel stopped first, its failure is the one to report
    const kernelStopped = kernelDone.then(() => 'kernel stopped' as const);
    const ended = await Promise.race([conversation, kernelStopped]);
    if (ended === 'kernel stopped') throw new ChatKernelFailed("homed chat's kernel stopped before the reply ended");
    return ended;
  } finally {
    client.close();
  }
};
