import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { SequentialIds, VirtualClock, type AnyEvent } from '../../events/index.ts';
import { describeEventStoreContract } from '../events/eventStoreContract.ts';
import { useTempDir } from '../support/tempDir.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const tempDir = useTempDir();

describeEventStoreContract('sqlite file', async () => ({
  store: SqliteEventStore.open<AnyEvent>(join(tempDir(), 'events.db'), {
    catalog: createTestCatalog(),
    clock: new VirtualClock(1_000),
    ids: new SequentialIds(),
    pollIntervalMs: 20,
  }),
}));
