/**
 * The scheduler's wake-ups (cooldown ends, the backlog deadline) are armed on the kernel's
 * `timers` facility: with manual timers and a virtual clock the tick arrives exactly when the
 * test moves time, and stopping the module disarms it.
 */
import { describe, expect, it } from 'vitest';
import { Facility, startKernel } from '../../actors/kernel/index.ts';
import { schedulerModule, type SchedulerFacility } from '../../actors/modules/schedulerModule.ts';
import { createDefaultCatalog, InMemoryEventStore, SequentialIds, VirtualClock } from '../../events/index.ts';
import type { SchedulerFact } from '../../machines/scheduler/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const OFFLOAD_AFTER_MS = 60_000;

const startScheduler = async () => {
  const clock = new VirtualClock(1_000_000);
  const timers = createManualTimers();
  const store = new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds());
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
  return { clock, timers, kernel, scheduler, facts };
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

  it('disarms its timer when it stops', async () => {
    const { timers, kernel, scheduler } = await startScheduler();
    await scheduler.submit({ id: 'a', source: 'cli', origin: 'user', kind: 'queued' });
    await scheduler.submit({ id: 'b', source: 'cli', origin: 'user', kind: 'queued' });
    expect(timers.armed).toBe(1);
    await kernel.stop('test done');
    expect(timers.armed).toBe(0);
  });
});
