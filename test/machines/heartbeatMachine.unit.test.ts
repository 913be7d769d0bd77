/** A heartbeat loop on virtual time: it fires when a CLOCK message reaches its due time, never on its own. */
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HEARTBEAT_INTERVALS_MS, heartbeatMachine, type HeartbeatFact } from '../../machines/memory/heartbeatMachine.ts';

const loop = (intervalMs = 1_000, startAt = 0) => {
  const fired: HeartbeatFact['data'][] = [];
  const startedOver: HeartbeatFact['data'][] = [];
  const actor = createActor(heartbeatMachine, { input: { loop: 'archive', intervalMs, startAt } });
  actor.on('HeartbeatFired', (fact) => fired.push(fact.data));
  actor.on('HeartbeatStartedOver', (fact) => startedOver.push(fact.data));
  actor.start();
  return { fired, startedOver, at: (t: number) => actor.send({ type: 'CLOCK', at: t }) };
};

describe('heartbeat machine', () => {
  it('uses the spec intervals: distill 30, archive 60, merge 120, review 120, rules 10 minutes', () => {
    expect(DEFAULT_HEARTBEAT_INTERVALS_MS).toEqual({
      distill: 1_800_000,
      archive: 3_600_000,
      merge: 7_200_000,
      review: 7_200_000,
      rules: 600_000,
    });
  });

  it('fires exactly at its due time, not before, then one interval after that firing', () => {
    const { fired, at } = loop(1_000, 0);
    at(999);
    expect(fired).toEqual([]);
    at(1_000);
    at(1_500);
    at(2_000);
    expect(fired).toEqual([
      { loop: 'archive', at: 1_000, since: 0 },
      { loop: 'archive', at: 2_000, since: 1_000 },
    ]);
  });

  it('fires once after a long gap, not once per missed interval', () => {
    const { fired, at } = loop(1_000, 0);
    at(10_500);
    at(11_000);
    expect(fired.map((f) => f.at)).toEqual([10_500]);
    at(11_500);
    expect(fired.map((f) => f.at)).toEqual([10_500, 11_500]);
  });

  it('resumes from its last firing before a restart: due one interval after it, covering what came after it', () => {
    const fired: HeartbeatFact['data'][] = [];
    const actor = createActor(heartbeatMachine, { input: { loop: 'rules', intervalMs: 1_000, startAt: 5_000, since: 3_200 } });
    actor.on('HeartbeatFired', (fact) => fired.push(fact.data));
    actor.start();
    actor.send({ type: 'CLOCK', at: 5_000 });
    expect(fired).toEqual([{ loop: 'rules', at: 5_000, since: 3_200 }]);
  });

  it('starts over from the start when it left off later than the start (the clock went back), instead of waiting for the clock to catch up', () => {
    const fired: HeartbeatFact['data'][] = [];
    const actor = createActor(heartbeatMachine, { input: { loop: 'rules', intervalMs: 1_000, startAt: 5_000, since: 900_000 } });
    actor.on('HeartbeatFired', (fact) => fired.push(fact.data));
    actor.start();
    expect(actor.getSnapshot().context.dueAt).toBe(6_000);
    actor.send({ type: 'CLOCK', at: 6_000 });
    expect(fired).toEqual([{ loop: 'rules', at: 6_000, since: 5_000 }]);
  });

  it('starts over, without firing, when a clock reading is earlier than its last firing; then fires one interval after it', () => {
    const { fired, startedOver, at } = loop(1_000, 0);
    at(50_000);
    at(2_000);
    expect(fired.map((f) => f.at)).toEqual([50_000]);
    expect(startedOver).toEqual([{ loop: 'archive', at: 2_000, leftOffAt: 50_000 }]);
    at(2_999);
    at(3_000);
    expect(fired).toEqual([
      { loop: 'archive', at: 50_000, since: 0 },
      { loop: 'archive', at: 3_000, since: 2_000 },
    ]);
  });

  it('refuses an interval that is not positive', () => {
    const actor = createActor(heartbeatMachine, { input: { loop: 'merge', intervalMs: 0, startAt: 0 } });
    actor.subscribe({ error: () => undefined });
    actor.start();
    expect(actor.getSnapshot().status).toBe('error');
    expect(String((actor.getSnapshot() as { error?: unknown }).error)).toMatch(/interval must be a positive number/);
  });
});
