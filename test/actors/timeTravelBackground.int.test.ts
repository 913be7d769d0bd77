/**
 * Time travel and verify as background work in the daemon, over a real daemon's log (in
 * process) with filler events after it: before every read of the log they take the pause they
 * were given (so the daemon answers others meanwhile), and what they report is byte for byte
 * what they report in one go, even when events are appended while they pause; once their
 * signal is aborted they stop at the next read, and the time travel after that is still exact.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeTravel } from '../../actors/index.ts';
import { ProjectionRunner } from '../../actors/projections/projectionRunner.ts';
import { REBUILD_BATCH_SIZE } from '../../actors/replay/rebuildProjections.ts';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { existingLogPath, openEventLog } from '../../cli/dataDir.ts';
import { REPLAYERS } from '../../cli/replayers.ts';
import { allProjections } from '../../projections/index.ts';
import { settle } from '../support/daemonQuiescence.ts';
import { step } from '../support/daemonRun.ts';
import { drainDaemon } from '../support/drainDaemon.ts';
import { InProcessDaemon } from '../support/inProcessDaemon.ts';

/** Events no replayer reads, after the daemon's: enough for the rebuild to take several batches. */
const FILLER = 3 * REBUILD_BATCH_SIZE;

/** A data dir with one answered turn and FILLER events after it. */
const recordedLog = async (root: string): Promise<string> => {
  const daemon = new InProcessDaemon({ root });
  try {
    await daemon.boot();
    await settle(daemon);
    await step(daemon, () => daemon.ask('hi'));
    await drainDaemon(daemon);
    await daemon.stop();
  } finally {
    await daemon.dispose();
  }
  const store = openEventLog(existingLogPath(daemon.dataDir));
  await store.append(
    'filler',
    Array.from({ length: FILLER }, (_, run) => ({ type: 'StageTimedOut' as const, data: { run } })),
  );
  await store.close();
  return daemon.dataDir;
};

const travelOn = (store: SqliteEventStore) => new TimeTravel(store, {}, REPLAYERS);

/** A pause that counts how often it was taken, and runs `during` at the given count. */
const countingPause = (during: Readonly<Record<number, () => Promise<void> | void>> = {}) => {
  const pause = Object.assign(
    async () => {
      pause.taken++;
      await during[pause.taken]?.();
    },
    { taken: 0 },
  );
  return pause;
};

describe('time travel and verify as background work', () => {
  // One recorded log for the whole file (each test reads it; those that append say so).
  const root = mkdtempSync(join(tmpdir(), 'hologram-time-travel-'));
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await recordedLog(root);
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const withStore = async (use: (store: SqliteEventStore) => Promise<void>) => {
    const store = openEventLog(existingLogPath(dataDir));
    try {
      await use(store);
    } finally {
      await store.close();
    }
  };

  it('pauses before every read, rebuilds in batches, and answers as it does in one go', () =>
    withStore(async (store) => {
      const head = await store.headSeq();
      const oneGo = travelOn(store);
      const background = travelOn(store);
      try {
        const whole = await oneGo.at(head);
        const pause = countingPause();
        const paused = await background.at(head, { pause });
        expect(JSON.stringify(paused)).toBe(JSON.stringify(whole));
        // At least: the head, the event there, one read per batch of the rebuild, and the replayers' reads.
        expect(pause.taken).toBeGreaterThanOrEqual(2 + Math.ceil(head / REBUILD_BATCH_SIZE) + REPLAYERS.length);
      } finally {
        oneGo.close();
        background.close();
      }
    }));

  it('reports the log as it stood when it began, though events are appended while it pauses', () =>
    withStore(async (store) => {
      const head = await store.headSeq();
      const travel = travelOn(store);
      try {
        const before = await travel.at(head);
        travel.close();
        const pause = countingPause({ 1: () => store.append('late', [{ type: 'StageTimedOut', data: { run: 0 } }]).then(() => undefined) });
        const during = await travel.at(Number.MAX_SAFE_INTEGER, { pause });
        expect(await store.headSeq()).toBe(head + 1);
        expect(during.head).toBe(head);
        expect(JSON.stringify(during)).toBe(JSON.stringify(before));
      } finally {
        travel.close();
      }
    }));

  it('verifies against the read models as they stood when it began, while the daemon moves them', () =>
    withStore(async (store) => {
      // The daemon's read models move inside each append, as its inline projections do.
      const live = new ProjectionRunner(store.db, allProjections(), { trail: true });
      live.prepare();
      live.attachInline(store);
      const travel = travelOn(store);
      try {
        const quiet = await travel.verify();
        expect(quiet.first).toBeNull();
        const appendMoves = () => store.append('late', [{ type: 'StageTimedOut', data: { run: 1 } }]).then(() => undefined);
        const pause = countingPause({ 1: appendMoves, 5: appendMoves });
        const moving = await travel.verify({ pause });
        expect(pause.taken).toBeGreaterThan(5);
        expect(moving.projections.map((p) => p.status)).toEqual(quiet.projections.map((p) => p.status));
        expect(moving.first).toBeNull();
        expect(JSON.stringify(moving.journals)).toBe(JSON.stringify(quiet.journals));
      } finally {
        travel.close();
      }
    }));

  it('stops at the next read once its signal is aborted, and the next time travel is still exact', () =>
    withStore(async (store) => {
      const head = await store.headSeq();
      const counted = travelOn(store);
      const fresh = travelOn(store);
      const stopped = travelOn(store);
      try {
        const countAll = countingPause();
        const whole = await counted.at(head, { pause: countAll });
        // Aborted just before the rebuild's last batch: the batches before it are applied and kept.
        const leaving = new AbortController();
        const gone = new Error('the page went away');
        const pause = countingPause({ [countAll.taken - 1]: () => leaving.abort(gone) });
        await expect(stopped.at(head, { pause, signal: leaving.signal })).rejects.toBe(gone);
        expect(pause.taken).toBe(countAll.taken - 1);

        expect(JSON.stringify(await stopped.at(head))).toBe(JSON.stringify(whole));
        const earlier = Math.floor(head / 3);
        expect(JSON.stringify(await stopped.at(earlier))).toBe(JSON.stringify(await fresh.at(earlier)));
        // Aborted before it began: nothing is read.
        const early = countingPause();
        await expect(stopped.at(head, { pause: early, signal: AbortSignal.abort(gone) })).rejects.toBe(gone);
        expect(early.taken).toBe(0);
      } finally {
        counted.close();
        fresh.close();
        stopped.close();
      }
    }));
});
