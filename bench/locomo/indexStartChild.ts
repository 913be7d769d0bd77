/**
 * A start's index build, timed in a process of its own as a start makes it (`memorySystem`'s
 * `indexStart` runs it): `node --import tsx indexStartChild.ts LOG SNAPSHOT CONFIG [EARLIER]`
 * rebuilds the recall index from the log and read models in LOG, then reads it back from
 * SNAPSHOT (written now, as a clean stop leaves it), then, given EARLIER (a snapshot written some
 * utterances before, as an idle spell before a crash leaves it), reads that back and catches it
 * up, and prints `{ rebuildMs, snapshotMs, caughtUpMs? }` as JSON. Done in the measuring process,
 * the indexes it builds left tens of MB of RSS behind, charged to every later size's row.
 */
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { buildMemoryIndex, type MemoryConfig, memoryConfigOf } from '../../actors/memory/openMemory.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';

export type IndexStartTimes = Readonly<{ rebuildMs: number; snapshotMs: number; caughtUpMs?: number }>;

const [logPath, snapshotPath, configJson, earlierPath] = process.argv.slice(2);
if (logPath === undefined || snapshotPath === undefined || configJson === undefined) {
  process.stderr.write('usage: indexStartChild.ts LOG SNAPSHOT CONFIG_JSON [EARLIER_SNAPSHOT]\n');
  process.exit(2);
}
const store = SqliteEventStore.open(logPath, { catalog: createDefaultCatalog(), clock: new VirtualClock(0), ids: new SequentialIds('s') });
try {
  const tx = new SqliteReadModelTx(store.db);
  const settings = memoryConfigOf(JSON.parse(configJson) as Partial<MemoryConfig>);
  const timed = async (snapshot?: string): Promise<Readonly<{ ms: number; logged: string[] }>> => {
    const logged: string[] = [];
    const start = performance.now();
    await buildMemoryIndex(store, tx, settings, snapshot === undefined ? undefined : { path: snapshot, log: (line) => logged.push(line) });
    return { ms: performance.now() - start, logged };
  };
  const rebuild = await timed();
  const fromSnapshot = await timed(snapshotPath);
  if (fromSnapshot.logged.length > 0)
    throw new Error(`the index snapshot just written was not used as it is: ${fromSnapshot.logged.join('; ')}`);
  const caughtUp = earlierPath === undefined ? undefined : await timed(earlierPath);
  if (caughtUp && !caughtUp.logged.every((line) => line.includes('caught the index snapshot up'))) {
    throw new Error(`the earlier index snapshot was not caught up: ${caughtUp.logged.join('; ')}`);
  }
  const times: IndexStartTimes = {
    rebuildMs: rebuild.ms,
    snapshotMs: fromSnapshot.ms,
    ...(caughtUp ? { caughtUpMs: caughtUp.ms } : {}),
  };
  process.stdout.write(`${JSON.stringify(times)}\n`);
} finally {
  await store.close();
}
