/**
 * A plugin's injections through the hub into the real scheduler (its journal in a SQLite file):
 * a flood is cut at the plugin's bound before anything is recorded, each refusal is typed, the
 * flood is recorded as misbehaviour once a window, and the count of what waits follows the
 * scheduler through finishes, cancels, stops, a plugin's restart and the kernel's.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Facility, startKernel } from '../../actors/kernel/index.ts';
import { schedulerModule, type SchedulerFacility } from '../../actors/modules/schedulerModule.ts';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { createDefaultCatalog, PLUGIN_REGISTRY_STREAM, SCHEDULER_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { DEFAULT_INJECTION_BOUNDS, heldBy } from '../../plugins/host/injectionBounds.ts';
import { MAX_INJECTED_TEXT } from '../../plugins/host/pluginHub.ts';
import { attachLocalPlugin } from '../../plugins/host/localPlugin.ts';
import { PluginHub } from '../../plugins/host/pluginHub.ts';
import { INJECTION_THROTTLED, type PluginApi } from '../../plugins/sdk/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { useOpenStores, useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const stores = useOpenStores();
const running: { hub: PluginHub; kernel: Awaited<ReturnType<typeof startKernel>> }[] = [];
afterEach(async () => {
  for (const { hub, kernel } of running.splice(0).reverse()) {
    await hub.stop();
    await kernel.stop('test done');
  }
});

const { waitingAtMost: WAITING, interruptBurst: BURST, interruptEveryMs: EVERY } = DEFAULT_INJECTION_BOUNDS;

/** The scheduler (alone in a kernel) and a hub on the SQLite log at `path`; a second call on the same path is a restart. */
const boot = async (path: string, clock = new VirtualClock(1_000_000), boots = 0) => {
  const store = SqliteEventStore.open(path, { catalog: createDefaultCatalog(), clock, ids: new SequentialIds(`e${boots}`) });
  stores.push(store);
  const timers = createManualTimers();
  const kernel = await startKernel({
    store,
    modules: [schedulerModule()],
    given: { [Facility.eventLog]: store, [Facility.clock]: clock, [Facility.timers]: timers, [Facility.config]: {} },
    pid: 1,
    dataDir: '/nowhere',
  });
  await kernel.ready;
  const scheduler = kernel.facilities.get<SchedulerFacility>(Facility.scheduler);
  const hub = new PluginHub({ store, clock, ids: new SequentialIds(`input${boots}`), inputs: scheduler, timers });
  running.push({ hub, kernel });
  await hub.restore();
  const spammer = attachLocalPlugin(hub, 'spammer', ['input', 'interrupt'], () => undefined, { external: true });
  const held = (source = 'spammer') => heldBy(scheduler.state(), source);
  const misbehaved = async () =>
    (await store.readStream(PLUGIN_REGISTRY_STREAM))
      .filter((e) => e.type.startsWith('PluginMisbehav'))
      .map((e) => ({ type: e.type, data: e.data }));
  const queued = async (source: string) =>
    (await store.readStream(SCHEDULER_STREAM)).filter((e) => e.type === 'InputQueued' && (e.data as { source: string }).source === source);
  return { store, clock, timers, kernel, scheduler, hub, spammer, held, misbehaved, queued };
};

const refusalOf = async (attempt: Promise<unknown>): Promise<{ code?: string; bound?: string; limit?: number; message: string }> =>
  attempt.then(
    () => {
      throw new Error('expected the injection to be refused');
    },
    (error: { code?: string; bound?: string; limit?: number; message: string }) => error,
  );

/** Fires 300 L3 interrupts and then 1,000 inputs without waiting for any; how each settled. */
const flood = async (api: PluginApi) => {
  const interrupts = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => api.injectInterrupt({ text: `alarm ${i}` }, 3)));
  const inputs = await Promise.allSettled(Array.from({ length: 1_000 }, (_, i) => api.injectInput({ text: `spam ${i}` })));
  return { interrupts, inputs };
};

describe('a flood of injections through the hub', () => {
  it('admits the bound (8 interrupts, 32 inputs in all), refuses the rest typed, records none of them, and the flood once', async () => {
    const { spammer, held, misbehaved, queued, timers } = await boot(join(tempDir(), 'events.db'));
    const sent = flood(spammer);
    const { interrupts, inputs } = await sent;

    expect(interrupts.filter((r) => r.status === 'fulfilled')).toHaveLength(BURST);
    expect(inputs.filter((r) => r.status === 'fulfilled')).toHaveLength(WAITING - BURST);
    const refusals = [...interrupts, ...inputs].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refusals).toHaveLength(1_300 - WAITING);
    expect(refusals.every((e) => e.code === INJECTION_THROTTLED)).toBe(true);
    expect(refusals.filter((e) => e.bound === 'interrupts')).toHaveLength(300 - BURST);
    expect(refusals.filter((e) => e.bound === 'waiting')).toHaveLength(1_000 - (WAITING - BURST));
    expect(refusals.find((e) => e.bound === 'waiting').message).toMatch(/32 is the most one plugin may have at once/);

    // Only what was admitted reached the scheduler's journal.
    expect(held()).toBe(WAITING);
    expect(await queued('spammer')).toHaveLength(WAITING);

    // One event for the whole flood; the other refusals of the window are counted in its summary.
    expect(await misbehaved()).toEqual([
      { type: 'PluginMisbehaved', data: expect.objectContaining({ plugin: 'spammer', code: 'INPUT_FLOOD' }) },
    ]);
    timers.advance(60_000);
    await expect.poll(async () => (await misbehaved()).length).toBe(2);
    expect((await misbehaved())[1]).toEqual({
      type: 'PluginMisbehaviourSummarised',
      data: expect.objectContaining({ plugin: 'spammer', suppressed: 1_267, byCode: { INPUT_FLOOD: 1_267 } }),
    });
    // A new window records the next flood again, once.
    await refusalOf(spammer.injectInput({ text: 'one more' }));
    await refusalOf(spammer.injectInput({ text: 'and more' }));
    expect((await misbehaved()).map((e) => e.type)).toEqual(['PluginMisbehaved', 'PluginMisbehaviourSummarised', 'PluginMisbehaved']);
  });

  it('counts nothing against its bound for an injection refused for another reason (a conversation not its own)', async () => {
    const { spammer, held } = await boot(join(tempDir(), 'events.db'));
    for (let i = 0; i < WAITING + 1; i++) {
      await expect(spammer.injectInput({ text: `peek ${i}`, conversation: 'cli:root' })).rejects.toMatchObject({
        code: 'REGISTRATION_REFUSED',
      });
    }
    // Nor one longer than an input may be: three of 8 MB each filled 200 MB of log (found by the hostile tester).
    await expect(spammer.injectInput({ text: 'x'.repeat(MAX_INJECTED_TEXT + 1) })).rejects.toMatchObject({
      code: 'REGISTRATION_REFUSED',
      message: expect.stringContaining(`an input's text is 262,145 characters, more than the 262,144 an input may hold`),
    });
    expect(held()).toBe(0);
    await spammer.injectInput({ text: 'a fair one' });
    expect(held()).toBe(1);
  });

  it('frees a place for each of its inputs that ends: finished, cancelled or stopped, and time alone frees none', async () => {
    const { spammer, held, scheduler, clock } = await boot(join(tempDir(), 'events.db'));
    const receipts = [];
    for (let i = 0; i < WAITING; i++) receipts.push(await spammer.injectInput({ text: `job ${i}` }));
    expect(await refusalOf(spammer.injectInput({ text: 'over' }))).toMatchObject({ bound: 'waiting', limit: WAITING });
    clock.advance(60 * 60_000);
    expect(await refusalOf(spammer.injectInput({ text: 'still over' }))).toMatchObject({ bound: 'waiting' });

    await scheduler.finish(receipts[0]!.inputId, 'done');
    expect(held()).toBe(WAITING - 1);
    await spammer.injectInput({ text: 'after a finish' });
    await refusalOf(spammer.injectInput({ text: 'over again' }));

    await scheduler.cancel(receipts[5]!.inputId);
    await spammer.injectInput({ text: 'after a cancel' });
    await refusalOf(spammer.injectInput({ text: 'over again' }));

    // A stop cancels what waits at once; the running input counts until it ends.
    await scheduler.stop();
    expect(held()).toBe(1);
    await spammer.injectInput({ text: 'after a stop' });
    await scheduler.finish(scheduler.state().running!.id, 'cancelled');
    expect(held()).toBe(1);
  });

  it("keeps the plugin's bucket across its restart, refills it on the kernel's clock, and counts what a restarted kernel still holds", async () => {
    const path = join(tempDir(), 'events.db');
    const first = await boot(path);
    for (let i = 0; i < BURST; i++) await first.spammer.injectInterrupt({ text: `alarm ${i}` }, 3);
    expect(await refusalOf(first.spammer.injectInterrupt({ text: 'one too many' }, 3))).toMatchObject({
      bound: 'interrupts',
      limit: BURST,
      message: expect.stringMatching(/next is allowed in 10 s/),
    });
    // A crash and restart of the plugin does not refill it.
    await first.hub.detach('spammer', 'crashed');
    const again = attachLocalPlugin(first.hub, 'spammer', ['input', 'interrupt'], () => undefined, { external: true });
    await refusalOf(again.injectInterrupt({ text: 'after a restart' }, 3));
    first.clock.advance(EVERY - 1);
    await refusalOf(again.injectInterrupt({ text: 'almost' }, 3));
    first.clock.advance(1);
    await again.injectInterrupt({ text: 'refilled' }, 3);
    while (first.held() < WAITING) await again.injectInput({ text: 'fill' });

    // The kernel restarts: its running task is abandoned, the other inputs still wait and still count.
    await first.hub.stop();
    await first.kernel.stop('restart');
    running.splice(0);
    const second = await boot(path, first.clock, 1);
    expect(second.held()).toBe(WAITING - 1);
    await second.spammer.injectInput({ text: 'the one free place' });
    expect(await refusalOf(second.spammer.injectInput({ text: 'over' }))).toMatchObject({ bound: 'waiting' });
  });

  it('leaves the person and the built-ins alone: a timer raises 100 interrupts at once, and the cli is heard past a full plugin', async () => {
    const { hub, spammer, held } = await boot(join(tempDir(), 'events.db'));
    const timer = attachLocalPlugin(hub, 'timer', ['interrupt'], () => undefined);
    const cli = attachLocalPlugin(hub, 'cli', ['input'], () => undefined);
    await flood(spammer);
    const reminders = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => timer.injectInterrupt({ text: `Timer t${i} fired` }, 3)),
    );
    expect(reminders.every((r) => r.status === 'fulfilled')).toBe(true);
    await cli.injectInput({ text: 'hello, it is me', principal: 'owner' });
    expect([held('spammer'), held('timer'), held('cli')]).toEqual([WAITING, 100, 1]);
  });
});
