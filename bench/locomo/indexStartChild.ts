/**
 * A start's index build, timed in a process of its own as a start makes it (`memorySystem`'s
 * `indexStart` runs it): `node --import tsx indexStartChild.ts LOG SNAPSHOT CONFIG` rebuilds the
 * recall index from the log and read models in LOG, then reads it back from SNAPSHOT, and prints
 * `{ rebuildMs, snapshotMs }` as JSON. Done in the measuring process, the two indexes it builds
 * left tens of MB of RSS behind, charged to every later size's row.
 */
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { buildMemoryIndex, type MemoryConfig, memoryConfigOf } from '../../actors/memory/openMemory.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import { createDefaultCatalog, SequentialIds, VirtualClock } from '../../events/index.ts';

export type IndexStartTimes = Readonly<{ rebuildMs: number; snapshotMs: number }>;

const [logPath, snapshotPath, configJson] = process.argv.slice(2);
if (logPath === undefined || snapshotPath === undefined || configJson === undefined) {
  process.stderr.write('usage: indexStartChild.ts LOG SNAPSHOT CONFIG_JSON\n');
  process.exit(2);
}
const store = SqliteEventStore.open(logPath, { catalog: createDefaultCatalog(), clock: new VirtualClock(0), ids: new SequentialIds('s') });
try {
  const tx = new SqliteReadModelTx(store.db);
  const settings = memoryConfigOf(JSON.parse(configJson) as Partial<MemoryConfig>);
  let start = performance.now();
  await buildMemoryIndex(store, tx, settings);
  const rebuildMs = performance.now() - start;
  const unused: string[] = [];
  start = performance.now();
  await buildMemoryIndex(store, tx, settings, { path: snapshotPath, log: (line) => unused.push(line) });
  const snapshotMs = performance.now() - start;
  if (unused.length > 0) throw new Error(`the index snapshot just written was not used: ${unused.join('; ')}`);
  const times: IndexStartTimes = { rebuildMs, snapshotMs };
  process.stdout.write(`${JSON.stringify(times)}\n`);
} finally {
  await store.close();
}
