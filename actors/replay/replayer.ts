/**
 * What `homed replay --verify` runs for each kind of actor: a replayer re-delivers the recorded
 * messages of its journals to fresh machines and reports, per journal, the first difference
 * between what this build decides and what the log holds. One report shape for every actor.
 */
import type { EventStore } from '../../events/index.ts';
import type { ReplayDivergence } from '../journal/replayJournal.ts';
import type { Settings } from '../modules/config.ts';

export type JournalVerdict = Readonly<{ journal: string; divergence: ReplayDivergence | null }>;

/** An actor as its replay left it: the machine it runs, the state it was in, and how many messages it got. */
export type ActorAt = Readonly<{ actor: string; machine: string; state: unknown; messages: number; diverged: boolean }>;

export type ReplayReport = Readonly<{
  /** The actors, as a person calls them (`scheduler`, `turns`, `plugin supervisors`, `memory`). */
  name: string;
  verdicts: readonly JournalVerdict[];
  /** Messages re-delivered, over every journal. */
  messages: number;
  /** What the replay did not re-decide, and why (journals an earlier build wrote, say). */
  notes?: readonly string[];
  /** Every actor as the replay left it (time travel shows them at its seq). */
  actors: readonly ActorAt[];
}>;

/** How a time travel or a verify shares the daemon's thread with the live actors. */
export type BackgroundWork = Readonly<{
  /** Once aborted (the page that asked went away), the work stops at its next pause, rejecting with the signal's reason. */
  signal?: AbortSignal;
  /** Gives the event loop a turn; awaited before every read of the log (the web UI passes a zero-delay timer). */
  pause?: () => Promise<void>;
}>;

/** Gives the event loop a turn, then stops the work if it was called off. */
export const takeTurn = async (work: BackgroundWork): Promise<void> => {
  work.signal?.throwIfAborted();
  await work.pause?.();
  work.signal?.throwIfAborted();
};

/**
 * `untilSeq`: re-deliver only what the log held at that seq (time travel); a replayer may then
 * leave out actors long over (a turn that ended far earlier) and report only those that matter.
 * `work`: a replayer that re-decides many messages after one read takes a turn between them.
 */
export type Replayer = Readonly<{
  name: string;
  replay(store: EventStore, settings: Settings, untilSeq?: number, work?: BackgroundWork): Promise<ReplayReport>;
}>;

/**
 * A difference at or before `seq`. One past it is the cut, not a bug: a message's facts are
 * appended with it, so a seq inside that append has the message and not yet all its facts.
 */
export const divergedBy = (divergence: ReplayDivergence | null, seq = Number.MAX_SAFE_INTEGER): boolean =>
  divergence !== null && divergence.seq <= seq;

/** The lines a report prints: each divergence, then how many journals match. */
export const reportLines = (report: ReplayReport): string[] => {
  const diverged = report.verdicts.filter((v) => v.divergence);
  const lines = diverged.map(({ journal, divergence }) => {
    const { seq, expected, actual } = divergence!;
    return `${journal}: DIVERGED at seq ${seq}: recorded ${JSON.stringify(expected)}, this build decides ${JSON.stringify(actual)}`;
  });
  const total = report.verdicts.length;
  if (total > 0 || report.notes?.length) {
    const notes = report.notes?.length ? `; ${report.notes.join('; ')}` : '';
    lines.push(
      `${report.name}: ${total - diverged.length} of ${total} journals match (${report.messages} messages re-delivered, same facts byte for byte)${notes}`,
    );
  }
  return lines;
};
