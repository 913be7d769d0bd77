import { describe, expect, it } from 'vitest';
import { replayKernel, startKernel } from '../../actors/kernel/index.ts';
import { kernelReplayer } from '../../actors/replay/coreReplayers.ts';
import { reportLines } from '../../actors/replay/replayer.ts';
import {
  InMemoryEventStore,
  KERNEL_STREAM,
  SequentialIds,
  VirtualClock,
  type NewHologramEvent,
  type RecordedEvent,
} from '../../events/index.ts';
import { tracedModule } from '../support/kernelJournal.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const newStore = () => new InMemoryEventStore(createTestCatalog(), new VirtualClock(0), new SequentialIds());

/** A kernel stream with two boots, each started and stopped. */
const twoBoots = async () => {
  const store = newStore();
  for (const boot of ['one', 'two']) {
    const trace: string[] = [];
    const kernel = await startKernel({
      store,
      modules: [tracedModule('config', [], ['config'], trace), tracedModule('llm', ['config'], ['llm'], trace)],
      given: {},
      pid: 1,
      dataDir: 'd',
      ids: new SequentialIds(boot),
    });
    await kernel.ready;
    await kernel.stop(`boot ${boot} over`);
  }
  return store;
};

/** The same journal in a fresh log, with `change` applied to each event. */
const copied = async (store: InMemoryEventStore, change: (event: RecordedEvent) => RecordedEvent = (e) => e) => {
  const copy = newStore();
  const events = (await store.readStream(KERNEL_STREAM)).map(change);
  await copy.append(
    KERNEL_STREAM,
    events.map((e) => ({ type: e.type, data: e.data, at: e.at, id: e.id }) as NewHologramEvent),
  );
  return copy;
};

const secondBootStart = (events: readonly RecordedEvent[]) => events.filter((e) => e.type === 'KernelStarted')[1]!.seq - 1;

describe('replayKernel', () => {
  it('replays every boot of the kernel stream on a fresh machine', async () => {
    const store = await twoBoots();
    const events = await store.readStream(KERNEL_STREAM);
    const replays = await replayKernel(store);
    expect(replays).toEqual([
      { journal: 'kernel@1', divergence: null, messages: 6, earlierFormat: false, state: 'stopped' },
      { journal: `kernel@${secondBootStart(events)}`, divergence: null, messages: 6, earlierFormat: false, state: 'stopped' },
    ]);
    expect(reportLines(await kernelReplayer.replay(store, {}))).toEqual([
      'kernel: 2 of 2 journals match (12 messages re-delivered, same facts byte for byte)',
    ]);
  });

  it('reports the first fact of a tampered journal with its seq, what the log holds and what this build decides', async () => {
    const store = await twoBoots();
    const events = await store.readStream(KERNEL_STREAM);
    const second = secondBootStart(events);
    // In the second boot, someone swapped the stop order: config asked to stop before llm.
    const tampered = events.find((e) => e.seq > second && e.type === 'ModuleStopRequested')!;
    const copy = await copied(store, (e) => (e.seq === tampered.seq ? { ...e, data: { module: 'config' } } : e));
    const replays = await replayKernel(copy);
    expect(replays[0]!.divergence).toBeNull();
    expect(replays[1]!.divergence).toEqual({
      seq: tampered.seq,
      expected: { type: 'ModuleStopRequested', data: { module: 'config' } },
      actual: { type: 'ModuleStopRequested', data: { module: 'llm' } },
    });
    const lines = reportLines(await kernelReplayer.replay(copy, {}));
    expect(lines[0]).toMatch(
      new RegExp(`^kernel@${second}: DIVERGED at seq ${tampered.seq}: recorded .*"config".*, this build decides .*"llm"`),
    );
    expect(lines[1]).toContain('kernel: 1 of 2 journals match');
  });

  it('a changed message is re-decided: the fact it caused differs', async () => {
    const store = await twoBoots();
    const events = await store.readStream(KERNEL_STREAM);
    const stop = events.find((e) => e.type === 'InputDelivered' && (e.data as { message: { type: string } }).message.type === 'stop')!;
    const copy = await copied(store, (e) =>
      e.seq === stop.seq ? { ...e, data: { to: 'kernel', message: { type: 'stop', at: e.at, reason: 'forged' } } } : e,
    );
    const stopped = events.find((e) => e.type === 'KernelStopped')!;
    expect((await replayKernel(copy))[0]!.divergence).toEqual({
      seq: stopped.seq,
      expected: { type: 'KernelStopped', data: { reason: 'boot one over' } },
      actual: { type: 'KernelStopped', data: { reason: 'forged' } },
    });
  });

  it('counts boots an earlier build recorded (no boot message) apart, and still replays the ones after', async () => {
    const store = newStore();
    await store.append(KERNEL_STREAM, [
      { type: 'KernelStarted', data: { pid: 1, layers: [['config']], dataDir: 'd' } },
      { type: 'ModuleStarted', data: { module: 'config', layer: 0, provides: ['config'] } },
      { type: 'ModuleStopped', data: { module: 'config' } },
      { type: 'KernelStopped', data: { reason: 'old' } },
    ]);
    const kernel = await startKernel({
      store,
      modules: [tracedModule('config', [], ['config'], [])],
      given: {},
      pid: 2,
      dataDir: 'd',
    });
    await kernel.ready;
    await kernel.stop('new');
    expect(reportLines(await kernelReplayer.replay(store, {}))).toEqual([
      "kernel: 1 of 1 journals match (4 messages re-delivered, same facts byte for byte); 1 boot(s) recorded by an earlier build's format, not re-decided",
    ]);
  });
});
