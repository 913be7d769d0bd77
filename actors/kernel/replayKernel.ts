/**
 * Replays the kernel's journal. The `kernel` stream holds every boot of the data dir one after
 * another (one daemon at a time holds the data dir, so boots never interleave); each boot begins
 * with its boot message and is replayed on a fresh machine, whose facts must equal the recorded
 * ones byte for byte. A boot the daemon never finished (killed mid-boot or mid-run) replays as
 * far as it was recorded. Boots an earlier build recorded (KernelStarted first, no boot message)
 * are counted apart: this build does not re-decide them.
 */
import { KERNEL_STREAM, type EventStore, type RecordedEvent } from '../../events/index.ts';
import { kernelMachine } from '../../machines/kernel/index.ts';
import { messageOf, replayEvents, type ReplayDivergence } from '../journal/replayJournal.ts';

export type KernelBootReplay = Readonly<{
  /** `kernel@SEQ`: the boot whose first event is at SEQ. */
  journal: string;
  divergence: ReplayDivergence | null;
  messages: number;
  earlierFormat: boolean;
  /** The replayed kernel's state value after the boot's last message. */
  state?: unknown;
}>;

const isBoot = (event: RecordedEvent): boolean => messageOf(event, undefined)?.type === 'boot';

/** The kernel stream cut into boots: a boot begins at its boot message, or (an earlier build's) at a KernelStarted without one. */
export const kernelBoots = (events: readonly RecordedEvent[]): RecordedEvent[][] => {
  const boots: RecordedEvent[][] = [];
  events.forEach((event, i) => {
    const begins = isBoot(event) || (event.type === 'KernelStarted' && !(i > 0 && isBoot(events[i - 1]!)));
    if (begins || boots.length === 0) boots.push([event]);
    else boots.at(-1)!.push(event);
  });
  return boots;
};

export const replayKernelBoot = (events: readonly RecordedEvent[]): KernelBootReplay => {
  const journal = `${KERNEL_STREAM}@${events[0]?.seq ?? 0}`;
  if (events[0]?.type === 'KernelStarted') return { journal, divergence: null, messages: 0, earlierFormat: true };
  const replay = replayEvents({ events, logic: kernelMachine, input: undefined });
  return { journal, divergence: replay.divergence, messages: replay.messages.length, earlierFormat: false, state: replay.snapshot.value };
};

/** Every boot in the log, oldest first; with `untilSeq`, as far as the log held it at that seq (time travel). */
export const replayKernel = async (store: EventStore, untilSeq = Number.MAX_SAFE_INTEGER): Promise<KernelBootReplay[]> =>
  kernelBoots((await store.readStream(KERNEL_STREAM)).filter((e) => e.seq <= untilSeq)).map(replayKernelBoot);
