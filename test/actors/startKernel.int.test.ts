import { describe, expect, it } from 'vitest';
import { KernelBootFailed, replayKernel, startKernel, type KernelModule } from '../../actors/kernel/index.ts';
import { InMemoryEventStore, SequentialIds, VirtualClock } from '../../events/index.ts';
import { asModule, factLines, journalLine, journalLines, tracedModule as module } from '../support/kernelJournal.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const newStore = () => new InMemoryEventStore(createTestCatalog(), new VirtualClock(0), new SequentialIds());

const boot = (store: InMemoryEventStore, modules: readonly KernelModule[], ids = new SequentialIds('k')) =>
  startKernel({ store, modules, given: {}, pid: 1, dataDir: 'd', clock: new VirtualClock(1_000), ids });

describe('startKernel', () => {
  it('starts modules layer by layer, in parallel within a layer, stops them in reverse once, and journals each message with its facts', async () => {
    const store = newStore();
    const trace: string[] = [];
    const kernel = await startKernel({
      store,
      modules: [
        module('agent', ['llm', 'memory'], ['agent'], trace),
        module('llm', ['config'], ['llm'], trace),
        module('memory', ['config'], ['memory'], trace),
        module('config', ['data-dir'], ['config'], trace),
      ],
      given: { 'data-dir': '/tmp/x' },
      pid: 42,
      dataDir: '/tmp/x',
      ids: new SequentialIds('k'),
    });
    await kernel.ready;
    expect(kernel.layers).toEqual([['config'], ['llm', 'memory'], ['agent']]);
    // Both layer-1 modules began init before either finished: they run in parallel.
    expect(trace.slice(2, 6)).toEqual(['init llm', 'init memory', 'ready llm', 'ready memory']);
    expect(kernel.facilities.get('agent')).toBe('agent-value');

    const output = await kernel.stop('test over');
    expect(output.failure).toBeNull();
    expect(await kernel.stop('again')).toEqual(output);
    expect(trace.filter((t) => t.startsWith('stop'))).toEqual(['stop agent', 'stop memory', 'stop llm', 'stop config']);
    const events = await store.readStream('kernel');
    expect(journalLines(events)).toEqual([
      '> boot',
      'KernelStarted',
      'LayerStartRequested 0: config',
      '> module.ready config',
      'ModuleStarted config',
      'LayerStartRequested 1: llm, memory',
      '> module.ready llm',
      'ModuleStarted llm',
      '> module.ready memory',
      'ModuleStarted memory',
      'LayerStartRequested 2: agent',
      '> module.ready agent',
      'ModuleStarted agent',
      '> stop',
      'ModuleStopRequested agent',
      '> module.stopped agent',
      'ModuleStopped agent',
      'ModuleStopRequested memory',
      '> module.stopped memory',
      'ModuleStopped memory',
      'ModuleStopRequested llm',
      '> module.stopped llm',
      'ModuleStopped llm',
      'ModuleStopRequested config',
      '> module.stopped config',
      'ModuleStopped config',
      'KernelStopped',
    ]);
    expect(events[1]!.data).toEqual({ pid: 42, layers: [['config'], ['llm', 'memory'], ['agent']], dataDir: '/tmp/x' });
    expect(events.at(-1)!.data).toEqual({ reason: 'test over' });
    // One boot is one piece of work; each fact names the message that caused it.
    expect(new Set(events.map((e) => e.correlation))).toEqual(new Set([events[0]!.correlation]));
    let message = '';
    for (const event of events) {
      if (event.type === 'InputDelivered') message = event.id;
      else expect(event.causation).toBe(message);
    }
  });

  it("runs a layer's inits and a module's stop only once the fact asking for them is in the log", async () => {
    const store = newStore();
    const trace: string[] = [];
    const append = store.append.bind(store);
    store.append = async (stream, events, options) => {
      const result = await append(stream, events, options);
      for (const event of result.events) if (event.type.endsWith('Requested')) trace.push(`committed ${journalLine(event)}`);
      return result;
    };
    const kernel = await boot(store, [module('config', [], ['config'], trace), module('llm', ['config'], ['llm'], trace)]);
    await kernel.ready;
    await kernel.stop('over');
    expect(trace).toEqual([
      'committed LayerStartRequested 0: config',
      'init config',
      'ready config',
      'committed LayerStartRequested 1: llm',
      'init llm',
      'ready llm',
      'committed ModuleStopRequested llm',
      'stop llm',
      'committed ModuleStopRequested config',
      'stop config',
    ]);
  });

  it('stops what started, in reverse order, when a module fails to init, and records why', async () => {
    const store = newStore();
    const trace: string[] = [];
    const kernel = await boot(store, [
      module('config', [], ['config'], trace),
      module('llm', ['config'], ['llm'], trace, {
        init: () => {
          throw Object.assign(new Error('no provider configured'), { code: 'NO_PROVIDER' });
        },
      }),
      module('agent', ['llm'], ['agent'], trace),
    ]);
    await expect(kernel.ready).rejects.toThrow(KernelBootFailed);
    const output = await kernel.done;
    expect(output.failure).toEqual({ module: 'llm', error: 'no provider configured' });
    expect(trace).not.toContain('init agent');
    // llm's init failed, so its stop is not run; it is still asked, in order, and reports stopped.
    expect(trace.filter((t) => t.startsWith('stop'))).toEqual(['stop config']);
    const events = await store.readStream('kernel');
    expect(factLines(events)).toEqual([
      'KernelStarted',
      'LayerStartRequested 0: config',
      'ModuleStarted config',
      'LayerStartRequested 1: llm',
      'ModuleFailed llm',
      'ModuleStopRequested llm',
      'ModuleStopped llm',
      'ModuleStopRequested config',
      'ModuleStopped config',
      'KernelStopped',
    ]);
    expect(events.find((e) => e.type === 'ModuleFailed')!.data).toEqual({
      module: 'llm',
      layer: 1,
      error: 'no provider configured',
      code: 'NO_PROVIDER',
    });
    expect((events.at(-1)!.data as { reason: string }).reason).toContain('no provider configured');
  });

  it('fails a module that finishes init without producing a facility it declared', async () => {
    const kernel = await boot(newStore(), [asModule({ name: 'config', requires: [], provides: ['config'], init: () => undefined })]);
    await expect(kernel.ready).rejects.toThrow("init finished without producing 'config'");
  });

  it('refuses a module that reads a facility it did not declare', async () => {
    const kernel = await boot(newStore(), [
      asModule({ name: 'a', requires: [], provides: ['a'], init: (c) => c.provide('a', 1) }),
      asModule({ name: 'b', requires: [], provides: ['b'], init: (c) => void c.require('a') }),
    ]);
    await expect(kernel.ready).rejects.toThrow("reads facility 'a' without declaring it");
  });

  it('stops in order when a running module reports a failure', async () => {
    const store = newStore();
    let fail: ((e: unknown) => void) | undefined;
    const kernel = await boot(store, [
      asModule({
        name: 'worker',
        requires: [],
        provides: ['w'],
        init: (c) => {
          c.provide('w', 1);
          fail = c.fail;
        },
      }),
    ]);
    await kernel.ready;
    fail!(new Error('tailing broke'));
    fail!(new Error('and again'));
    const output = await kernel.done;
    expect(output.failure).toEqual({ module: 'worker', error: 'tailing broke' });
    expect(factLines(await store.readStream('kernel'))).toEqual([
      'KernelStarted',
      'LayerStartRequested 0: worker',
      'ModuleStarted worker',
      'ModuleFailed worker',
      'ModuleStopRequested worker',
      'ModuleStopped worker',
      'KernelStopped',
    ]);
  });

  it('stops a module whose init is still running only after the init settled', async () => {
    const store = newStore();
    const trace: string[] = [];
    let release!: () => void;
    const kernel = await boot(store, [
      module('slow', [], ['slow'], trace, {
        init: async (c) => {
          trace.push('init slow');
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          c.provide('slow', 1);
          trace.push('ready slow');
        },
      }),
    ]);
    const stopped = kernel.stop('early');
    await new Promise((resolve) => setImmediate(resolve));
    expect(trace).toEqual(['init slow']);
    release();
    expect((await stopped).reason).toBe('early');
    await expect(kernel.ready).rejects.toThrow('the kernel stopped before every layer started (early)');
    expect(trace).toEqual(['init slow', 'ready slow', 'stop slow']);
    expect(factLines(await store.readStream('kernel')).slice(-4)).toEqual([
      'ModuleStopRequested slow',
      'ModuleStarted slow',
      'ModuleStopped slow',
      'KernelStopped',
    ]);
  });

  it('tells a module stopped while its init runs, through its stopping signal; an init that ends on it is stopped, not failed', async () => {
    const store = newStore();
    const trace: string[] = [];
    const kernel = await boot(store, [
      module('config', [], ['config'], trace),
      module('index', ['config'], ['index'], trace, {
        init: async (c) => {
          trace.push('init index');
          await new Promise<void>((resolve) => c.stopping.addEventListener('abort', () => resolve()));
          trace.push('index heard the stop');
          c.stopping.throwIfAborted();
        },
      }),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(trace).toContain('init index');
    const output = await kernel.stop('Ctrl-C while starting');
    expect(output.failure).toBeNull();
    expect(output.reason).toBe('Ctrl-C while starting');
    await expect(kernel.ready).rejects.toThrow('the kernel stopped before every layer started (Ctrl-C while starting)');
    // Its stop is not run (it never became ready); the module before it stops as usual.
    expect(trace.filter((t) => /index|stop/.test(t))).toEqual(['init index', 'index heard the stop', 'stop config']);
    const facts = factLines(await store.readStream('kernel'));
    expect(facts.some((f) => f.startsWith('ModuleFailed'))).toBe(false);
    expect(facts.slice(-5)).toEqual([
      'ModuleStopRequested index',
      'ModuleStopped index',
      'ModuleStopRequested config',
      'ModuleStopped config',
      'KernelStopped',
    ]);
    const replays = await replayKernel(store);
    expect(replays.map((r) => r.divergence)).toEqual([null]);
  });

  it('still reports a failure that an init meets after the stop, when it is not the stop itself', async () => {
    const store = newStore();
    const trace: string[] = [];
    const kernel = await boot(store, [
      module('index', [], ['index'], trace, {
        init: async (c) => {
          await new Promise<void>((resolve) => c.stopping.addEventListener('abort', () => resolve()));
          throw new Error('the disk went away');
        },
      }),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    const output = await kernel.stop('early');
    expect(output.failure).toEqual({ module: 'index', error: 'the disk went away' });
  });

  for (const when of ['mid-boot', 'mid-run'] as const) {
    it(`boots again after a daemon was killed ${when}, and both boots replay`, async () => {
      const store = newStore();
      const trace: string[] = [];
      const hang = { init: () => new Promise<void>(() => undefined) };
      // The first kernel is never stopped: its process "died" with the journal where it was.
      const first = await boot(store, [
        module('config', [], ['config'], trace),
        module('llm', ['config'], ['llm'], trace, when === 'mid-boot' ? hang : {}),
      ]);
      if (when === 'mid-run') await first.ready;
      else await new Promise((resolve) => setImmediate(resolve));
      const killedAt = await store.readStream('kernel');
      expect(factLines(killedAt)).not.toContain('KernelStopped');

      const second = await boot(
        store,
        [module('config', [], ['config'], trace), module('llm', ['config'], ['llm'], trace)],
        new SequentialIds('second-boot'),
      );
      await second.ready;
      expect((await second.stop('bye')).failure).toBeNull();
      const replays = await replayKernel(store);
      expect(replays.map((r) => r.journal)).toEqual([`kernel@1`, `kernel@${killedAt.at(-1)!.seq + 1}`]);
      expect(replays.map((r) => r.divergence)).toEqual([null, null]);
      expect(replays[0]!.messages).toBe(when === 'mid-run' ? 3 : 2);
    });
  }
});
