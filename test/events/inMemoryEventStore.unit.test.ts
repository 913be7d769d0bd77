import { InMemoryEventStore, SequentialIds, VirtualClock, type AnyEvent } from '../../events/index.ts';
import { createTestCatalog } from '../support/testCatalog.ts';
import { describeEventStoreContract } from './eventStoreContract.ts';

describeEventStoreContract('in-memory', async () => ({
  store: new InMemoryEventStore<AnyEvent>(createTestCatalog(), new VirtualClock(1_000), new SequentialIds()),
}));
