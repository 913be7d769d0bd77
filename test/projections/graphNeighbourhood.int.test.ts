/**
 * The graph walk recall starts from the entities a query names: relations within two hops, each
 * with the hop it was found at; with `without`, relations of that predicate are neither returned
 * nor walked through (recall leaves out a speaker's thousands of `said` relations).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../actors/projections/projectionRunner.ts';
import { SqliteReadModelTx } from '../../actors/projections/sqliteReadModelTx.ts';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, MEMORY_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { graphNeighbourhood, memoryProjections } from '../../projections/index.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();

const triple = (relationId: string, subject: string, predicate: string, object: string) => ({
  relationId,
  subject,
  predicate,
  object,
  confidence: 0.9,
});

describe('graphNeighbourhood', () => {
  it('walks two hops, and with `without` neither returns nor follows that predicate', async () => {
    const store = SqliteEventStore.open(join(tempDir(), 'events.db'), {
      catalog: createDefaultCatalog(),
      clock: new VirtualClock(0),
      ids: new SequentialIds('e'),
    });
    stores.push(store);
    const runner = new ProjectionRunner(store.db, memoryProjections(), { trail: false });
    runner.prepare();
    runner.attachInline(store);
    await store.append(MEMORY_STREAM, [
      {
        type: 'MemoryCommitted',
        data: {
          by: 'tool',
          at: 0,
          triples: [
            triple('r1', 'Ada', 'said', 'I like tea'),
            triple('r2', 'I like tea', 'about', 'tea'),
            triple('r3', 'Ada', 'lives in', 'Paris'),
            triple('r4', 'Paris', 'is in', 'France'),
          ],
        },
      },
    ]);
    const tx = new SqliteReadModelTx(store.db);
    const walk = (without?: string) =>
      graphNeighbourhood(tx, ['Ada'], 2, without ? { without } : {})
        .map(({ relation, hops }) => `${relation.relation_id}@${hops}`)
        .sort();
    expect(walk()).toEqual(['r1@1', 'r2@2', 'r3@1', 'r4@2']);
    // Through 'said' only r2 was reachable: it goes with it.
    expect(walk('said')).toEqual(['r3@1', 'r4@2']);
  });
});
