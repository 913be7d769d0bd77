/**
 * The scheduler's wake-ups (cooldown ends, the backlog deadline) are armed on the kernel's
 * `timers` facility: with manual timers and a virtual clock the tick arrives exactly when the
 * test moves time, and stopping the module disarms it.
 */
import { describe, expect, it } from 'vitest';
import { Facility, startKernel } from '../../actors/kernel/index.ts';
import { schedulerModule, type SchedulerFacility } from '../../actors/modules/schedulerModule.ts';
import { createDefaultCatalog, InMemoryEventStore, SCHEDULER_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { SCHEDULER_RULES, type SchedulerFact } from '../../machines/scheduler/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const OFFLOAD_AFTER_MS = 60_000;

const startScheduler = async (
  clock = new VirtualClock(1_000_000),
  store = new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds()),
) => {
  const timers = createManualTimers();
  const kernel = await startKernel({
    store,
    modules: [schedulerModule()],
    given: {
      [Facility.eventLog]: store,
      [Facility.clock]: clock,
      [Facility.timers]: timers,
      [Facility.config]: { scheduler: { offloadAfterMs: OFFLOAD_AFTER_MS } },
    },
    pid: 1,
    dataDir: '/nowhere',
  });
  await kernel.ready;
  const scheduler = kernel.facilities.get<SchedulerFacility>(Facility.scheduler);
  const facts: SchedulerFact[] = [];
  scheduler.onFacts((batch) => facts.push(...batch));
  return { clock, timers, kernel, scheduler, facts, store };
};

describe('the scheduler module', () => {
  it('arms its backlog deadline on the injected timers and ticks when they fire', async () => {
    const { clock, timers, kernel, scheduler, facts } = await startScheduler();
    await scheduler.submit({ id: 'a', source: 'cli', origin: 'user', kind: 'queued' });
    expect(timers.armed).toBe(0); // nothing waits, nothing is due
    await scheduler.submit({ id: 'b', source: 'cli', origin: 'user', kind: 'queued' });
    expect(timers.armed).toBe(1);

    clock.advance(OFFLOAD_AFTER_MS - 1);
    timers.advance(OFFLOAD_AFTER_MS - 1);
    expect(facts.map((f) => f.type)).not.toContain('BacklogAcknowledged');

    clock.advance(1);
    timers.advance(1);
    await expect.poll(() => facts.map((f) => f.type)).toContain('BacklogAcknowledged');
    expect(facts.find((f) => f.type === 'BacklogAcknowledged')?.data).toMatchObject({ inputIds: ['b'], runningTaskId: 'a' });
    expect(timers.armed).toBe(0); // told once: no further tick for it
    await kernel.stop('test done');
  });

  it('replays a log written under older rules by them, then adopts its own once, and says so in the log', async () => {
    const clock = new VirtualClock(1_000_000);
    const store = new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds());
    // A log of a build before the rules were versioned: an interrupt waiting behind a long task, told nothing.
    const arrive = (id: string, kind: 'queued' | 'interrupt') => ({
      type: 'InputDelivered' as const,
      data: {
        to: SCHEDULER_STREAM,
        message: { type: 'input.arrive', at: 1_000_000, input: { id, source: 'cli', origin: 'user', kind, level: 3 } },
      },
    });
    const queued = (inputId: string, kind: 'queued' | 'interrupt', where: 'inbox' | 'pending') => ({
      type: 'InputQueued' as const,
      data: {
        inputId,
        source: 'cli',
        origin: 'user' as const,
        kind,
        declaredLevel: kind === 'queued' ? null : 3,
        level: kind === 'queued' ? (0 as const) : (3 as const),
        where,
        at: 1_000_000,
      },
    });
    await store.append(SCHEDULER_STREAM, [
      arrive('long', 'interrupt'),
      queued('long', 'interrupt', 'pending'),
      { type: 'TaskStarted', data: { taskId: 'long', at: 1_000_000 } },
      arrive('waiting', 'interrupt'),
      queued('waiting', 'interrupt', 'pending'),
      // Busy past the offload time: those rules told queued inputs only, so this tick decided nothing.
      { type: 'InputDelivered', data: { to: SCHEDULER_STREAM, message: { type: 'tick', at: 1_000_000 + OFFLOAD_AFTER_MS } } },
    ]);
    clock.advance(OFFLOAD_AFTER_MS);
    const first = await startScheduler(clock, store);
    const adopted = (await store.readStream(SCHEDULER_STREAM)).filter((e) => e.type === 'SchedulerRulesAdopted');
    expect(adopted.map((e) => e.data)).toEqual([{ version: SCHEDULER_RULES, at: 1_000_000 + OFFLOAD_AFTER_MS }]);
    expect(first.scheduler.state().rules).toBe(SCHEDULER_RULES);
    await first.kernel.stop('test done');
    const second = await startScheduler(clock, store);
    expect((await store.readStream(SCHEDULER_STREAM)).filter((e) => e.type === 'SchedulerRulesAdopted')).toHaveLength(1);
    await second.kernel.stop('test done');
  });

  it('disarms its timer when it stops', async () => {
    const { timers, kernel, scheduler } = await startScheduler();
    await scheduler.submit({ id: 'a', source: 'cli', origin: 'user', kind: 'queued' });
    await scheduler.submit({ id: 'b', source: 'cli', origin: 'user', kind: 'queued' });
    expect(timers.armed).toBe(1);
    await kernel.stop('test done');
    expect(timers.armed).toBe(0);
  });
});
