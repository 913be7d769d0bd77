import { describe, expect, it } from 'vitest';
import { JournalBroken, JournaledActor } from '../../actors/journal/journaledActor.ts';
import { replayJournal } from '../../actors/journal/replayJournal.ts';
import { createDefaultCatalog, InMemoryEventStore, SCHEDULER_STREAM, SequentialIds, VirtualClock } from '../../events/index.ts';
import { schedulerMachine, type SchedulerMessage } from '../../machines/scheduler/index.ts';

const newStore = () => new InMemoryEventStore(createDefaultCatalog(), new VirtualClock(0), new SequentialIds());
const input = { config: { preemptCooldownMs: 2_000, offloadAfterMs: 60_000 } };

const messages: SchedulerMessage[] = [
  { type: 'input.arrive', at: 0, input: { id: 'a', source: 'cli', origin: 'user', kind: 'queued' } },
  { type: 'input.arrive', at: 100, input: { id: 'x', source: 'timer', origin: 'plugin', kind: 'interrupt', level: 1 } },
  { type: 'task.finish', at: 200, taskId: 'x', outcome: 'done' },
  { type: 'input.arrive', at: 1_000, input: { id: 'y', source: 'timer', origin: 'plugin', kind: 'interrupt', level: 3 } },
];

const journal = async () => {
  const store = newStore();
  const seenAtEffect: number[] = [];
  const actor = new JournaledActor({
    store,
    stream: SCHEDULER_STREAM,
    logic: schedulerMachine,
    input,
    onFacts: async () => void seenAtEffect.push(await store.headSeq()),
  });
  for (const message of messages) await actor.deliver(message);
  return { store, actor, seenAtEffect };
};

describe('JournaledActor', () => {
  it('appends each message with the facts it caused, in one append, before effects run', async () => {
    const { store, seenAtEffect } = await journal();
    const events = await store.readStream(SCHEDULER_STREAM);
    expect(events.map((e) => e.type)).toEqual([
      'InputDelivered',
      'InputQueued',
      'InboxPumped',
      'TaskStarted',
      'InputDelivered',
      'InputQueued',
      'TaskPreempted',
      'TaskStarted',
      'InputDelivered',
      'TaskCompleted',
      'TaskResumed',
      'InputDelivered',
      'InputQueued',
    ]);
    // Each effect saw its own facts already in the log.
    expect(seenAtEffect).toEqual([4, 8, 11, 13]);
    // Every event carries the time of the message that caused it, not the wall clock.
    let messageAt = -1;
    for (const event of events) {
      if (event.type === 'InputDelivered') messageAt = (event.data as { message: { at: number } }).message.at;
      expect(event.at).toBe(messageAt);
    }
  });

  it('replays to the same facts and the same state', async () => {
    const { store, actor } = await journal();
    const replay = await replayJournal({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input });
    expect(replay.divergence).toBeNull();
    expect(replay.messages).toHaveLength(4);
    expect(replay.snapshot.context).toEqual(actor.snapshot.context);
  });

  it('reports the first fact a changed build decides differently, with expected and actual', async () => {
    const { store } = await journal();
    // A build without the cooldown lets y (L3) preempt a at t=1000, one second after a was preempted.
    const changed = { config: { preemptCooldownMs: 0, offloadAfterMs: 60_000 } };
    const replay = await replayJournal({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input: changed });
    expect(replay.divergence).toEqual({
      seq: 14,
      expected: null,
      actual: { type: 'TaskPreempted', data: { taskId: 'a', by: 'y', preemptCount: 2, stackDepth: 1, at: 1_000 } },
    });
  });

  it('stops taking messages once an append fails, so the state never runs ahead of the log', async () => {
    const store = newStore();
    const actor = new JournaledActor({ store, stream: SCHEDULER_STREAM, logic: schedulerMachine, input });
    await actor.deliver(messages[0]!);
    await store.close();
    await expect(actor.deliver(messages[1]!)).rejects.toThrow(JournalBroken);
    await expect(actor.deliver(messages[2]!)).rejects.toThrow(/stopped taking messages/);
  });
});
