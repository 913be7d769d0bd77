import { describe, expect, it } from 'vitest';
import { startKernel, KernelBootFailed, type KernelModule } from '../../actors/kernel/index.ts';
import { InMemoryEventStore, SequentialIds, VirtualClock, type RecordedEvent } from '../../events/index.ts';
import { createTestCatalog } from '../support/testCatalog.ts';

const newStore = () => new InMemoryEventStore(createTestCatalog(), new VirtualClock(0), new SequentialIds());

type Trace = string[];

/** The kernel assembles any facility graph; these tests name facilities of their own, outside the daemon's. */
type AnyModule = Readonly<{
  name: string;
  requires: readonly string[];
  provides: readonly string[];
  init(context: { require(f: string): unknown; provide(f: string, value: unknown): void; fail(e: unknown): void }): void | Promise<void>;
  stop?(): void | Promise<void>;
}>;
const asModule = (m: AnyModule): KernelModule => m as unknown as KernelModule;

const module = (name: string, requires: string[], provides: string[], trace: Trace, behaviour: Partial<AnyModule> = {}): KernelModule =>
  asModule({
    name,
    requires,
    provides,
    async init(context) {
      trace.push(`init ${name}`);
      for (const facility of requires) context.require(facility);
      await new Promise((resolve) => setImmediate(resolve));
      for (const facility of provides) context.provide(facility, `${facility}-value`);
      trace.push(`ready ${name}`);
    },
    stop() {
      trace.push(`stop ${name}`);
    },
    ...behaviour,
  });

const lifecycle = (events: readonly RecordedEvent[]) =>
  events.map((e) => `${e.type}${'module' in (e.data as object) ? ` ${(e.data as { module: string }).module}` : ''}`);

describe('startKernel', () => {
  it('starts modules layer by layer, in parallel within a layer, and journals each lifecycle change', async () => {
    const store = newStore();
    const trace: Trace = [];
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
    });
    await kernel.ready;
    expect(kernel.layers).toEqual([['config'], ['llm', 'memory'], ['agent']]);
    // Both layer-1 modules began init before either finished: they run in parallel.
    expect(trace.slice(2, 6)).toEqual(['init llm', 'init memory', 'ready llm', 'ready memory']);
    expect(kernel.facilities.get('agent')).toBe('agent-value');

    const output = await kernel.stop('test over');
    expect(output.failure).toBeNull();
    expect(trace.slice(-4)).toEqual(['stop agent', 'stop memory', 'stop llm', 'stop config']);
    const events = await store.readStream('kernel');
    expect(lifecycle(events)).toEqual([
      'KernelStarted',
      'ModuleStarted config',
      'ModuleStarted llm',
      'ModuleStarted memory',
      'ModuleStarted agent',
      'ModuleStopped agent',
      'ModuleStopped memory',
      'ModuleStopped llm',
      'ModuleStopped config',
      'KernelStopped',
    ]);
    expect(events[0]!.data).toEqual({ pid: 42, layers: [['config'], ['llm', 'memory'], ['agent']], dataDir: '/tmp/x' });
    expect(events.slice(1).every((e) => e.correlation === events[0]!.id && e.causation === events[0]!.id)).toBe(true);
    expect(events.at(-1)!.data).toEqual({ reason: 'test over' });
  });

  it('stops what started, in reverse order, when a module fails to init, and records why', async () => {
    const store = newStore();
    const trace: Trace = [];
    const kernel = await startKernel({
      store,
      modules: [
        module('config', [], ['config'], trace),
        module('llm', ['config'], ['llm'], trace, {
          init: () => {
            throw Object.assign(new Error('no provider configured'), { code: 'NO_PROVIDER' });
          },
        }),
        module('agent', ['llm'], ['agent'], trace),
      ],
      given: {},
      pid: 1,
      dataDir: 'd',
    });
    await expect(kernel.ready).rejects.toThrow(KernelBootFailed);
    const output = await kernel.done;
    expect(output.failure).toEqual({ module: 'llm', error: 'no provider configured' });
    expect(trace).not.toContain('init agent');
    const events = await store.readStream('kernel');
    expect(lifecycle(events)).toEqual([
      'KernelStarted',
      'ModuleStarted config',
      'ModuleFailed llm',
      'ModuleStopped llm',
      'ModuleStopped config',
      'KernelStopped',
    ]);
    expect(events[2]!.data).toEqual({ module: 'llm', layer: 1, error: 'no provider configured', code: 'NO_PROVIDER' });
    expect((events.at(-1)!.data as { reason: string }).reason).toContain('no provider configured');
  });

  it('fails a module that finishes init without producing a facility it declared', async () => {
    const store = newStore();
    const kernel = await startKernel({
      store,
      modules: [asModule({ name: 'config', requires: [], provides: ['config'], init: () => undefined })],
      given: {},
      pid: 1,
      dataDir: 'd',
    });
    await expect(kernel.ready).rejects.toThrow("init finished without producing 'config'");
  });

  it('refuses a module that reads a facility it did not declare', async () => {
    const store = newStore();
    const kernel = await startKernel({
      store,
      modules: [
        asModule({ name: 'a', requires: [], provides: ['a'], init: (c) => c.provide('a', 1) }),
        asModule({ name: 'b', requires: [], provides: ['b'], init: (c) => void c.require('a') }),
      ],
      given: {},
      pid: 1,
      dataDir: 'd',
    });
    await expect(kernel.ready).rejects.toThrow("reads facility 'a' without declaring it");
  });

  it('stops in order when a running module reports a failure', async () => {
    const store = newStore();
    let fail: ((e: unknown) => void) | undefined;
    const kernel = await startKernel({
      store,
      modules: [
        asModule({
          name: 'worker',
          requires: [],
          provides: ['w'],
          init: (c) => {
            c.provide('w', 1);
            fail = c.fail;
          },
        }),
      ],
      given: {},
      pid: 1,
      dataDir: 'd',
    });
    await kernel.ready;
    fail!(new Error('tailing broke'));
    const output = await kernel.done;
    expect(output.failure).toEqual({ module: 'worker', error: 'tailing broke' });
    expect(lifecycle(await store.readStream('kernel'))).toEqual([
      'KernelStarted',
      'ModuleStarted worker',
      'ModuleFailed worker',
      'ModuleStopped worker',
      'KernelStopped',
    ]);
  });
});
