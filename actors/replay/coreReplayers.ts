/** The replayers of the actors under actors/: the kernel's boots, the scheduler, every turn, and the memory. */
import { MEMORY_STREAM, SCHEDULER_STREAM } from '../../events/index.ts';
import { schedulerMachine } from '../../machines/scheduler/index.ts';
import { replayJournal } from '../journal/replayJournal.ts';
import { replayKernel } from '../kernel/replayKernel.ts';
import { replayMemory } from '../memory/replayMemory.ts';
import { heartbeatIntervalsFrom, memoryConfigFrom } from '../modules/memoryModule.ts';
import { schedulerConfigFrom } from '../modules/schedulerModule.ts';
import { replayTurn, turnStreams } from '../turn/replayTurn.ts';
import { ToolsetLedger } from '../turn/toolsets.ts';
import { divergedBy, type Replayer } from './replayer.ts';

export const kernelReplayer: Replayer = {
  name: 'kernel',
  replay: async (store, _settings, untilSeq) => {
    const boots = await replayKernel(store, untilSeq);
    const current = boots.filter((b) => !b.earlierFormat);
    const earlier = boots.length - current.length;
    const last = current.at(-1);
    return {
      name: 'kernel',
      verdicts: current.map((b) => ({ journal: b.journal, divergence: b.divergence })),
      messages: current.reduce((n, b) => n + b.messages, 0),
      ...(earlier > 0 ? { notes: [`${earlier} boot(s) recorded by an earlier build's format, not re-decided`] } : {}),
      // The boot running then: the ones before it are over.
      actors: last
        ? [
            {
              actor: last.journal,
              machine: 'kernel',
              state: last.state ?? null,
              messages: last.messages,
              diverged: divergedBy(last.divergence, untilSeq),
            },
          ]
        : [],
    };
  },
};

export const schedulerReplayer: Replayer = {
  name: 'scheduler',
  replay: async (store, settings, untilSeq) => {
    const replay = await replayJournal({
      store,
      stream: SCHEDULER_STREAM,
      logic: schedulerMachine,
      input: { config: schedulerConfigFrom(settings) },
      untilSeq,
    });
    const messages = replay.messages.length;
    return {
      name: 'scheduler',
      verdicts: [{ journal: SCHEDULER_STREAM, divergence: replay.divergence }],
      messages,
      actors:
        messages > 0
          ? [
              {
                actor: SCHEDULER_STREAM,
                machine: 'scheduler',
                state: replay.snapshot.value,
                messages,
                diverged: divergedBy(replay.divergence, untilSeq),
              },
            ]
          : [],
    };
  },
};

/** Turns time travel shows at one seq: the open ones and the last few ended, newest last. */
const MAX_TURNS_AT = 20;
const ENDED_TURNS_AT = 3;

/** The turns to replay: all of them for verify; at a seq, the open ones and the last few that ended. */
const turnsToReplay = async (store: Parameters<Replayer['replay']>[0], untilSeq: number | undefined): Promise<string[]> => {
  if (untilSeq === undefined) return turnStreams(store);
  const started = (await store.readAll({ types: ['TurnRequested'], toSeq: untilSeq })).map((e) => e.stream);
  const ended = new Set((await store.readAll({ types: ['TurnCompleted'], toSeq: untilSeq })).map((e) => e.stream));
  const open = started.filter((stream) => !ended.has(stream));
  return [...open, ...started.filter((s) => ended.has(s)).slice(-ENDED_TURNS_AT)].slice(-MAX_TURNS_AT);
};

export const turnsReplayer: Replayer = {
  name: 'turns',
  replay: async (store, _settings, untilSeq) => {
    const toolsets = new ToolsetLedger(store);
    const replays = [];
    for (const stream of await turnsToReplay(store, untilSeq)) replays.push(await replayTurn(store, stream, toolsets, untilSeq));
    const current = replays.filter((r) => !r.earlierFormat);
    const earlier = replays.length - current.length;
    return {
      name: 'turns',
      verdicts: current.map((r) => ({ journal: r.stream, divergence: r.divergence })),
      messages: current.reduce((n, r) => n + r.messages, 0),
      ...(earlier > 0 ? { notes: [`${earlier} turn(s) recorded by an earlier build's format, not re-decided`] } : {}),
      actors: current.map((r) => ({
        actor: r.stream,
        machine: 'turn',
        state: r.state ?? null,
        messages: r.messages,
        diverged: divergedBy(r.divergence, untilSeq),
      })),
    };
  },
};

export const memoryReplayer: Replayer = {
  name: 'memory',
  replay: async (store, settings, untilSeq, work) => {
    const replay = await replayMemory(store, memoryConfigFrom(settings), heartbeatIntervalsFrom(settings), untilSeq, work);
    const notes = [
      ...(replay.messages > 0 ? [`${replay.decisions} decisions re-decided`] : []),
      ...(replay.earlier > 0 ? [`${replay.earlier} events an earlier build recorded before this journal began, applied as recorded`] : []),
    ];
    const diverged = divergedBy(replay.divergence, untilSeq);
    return {
      name: 'memory',
      verdicts: replay.messages > 0 ? [{ journal: 'memory', divergence: replay.divergence }] : [],
      messages: replay.messages,
      notes,
      actors: [
        ...(replay.messages > 0
          ? [{ actor: MEMORY_STREAM, machine: 'memory', state: `after ${replay.lastMessage}`, messages: replay.messages, diverged }]
          : []),
        ...replay.loops.map(({ loop, state }) => ({
          actor: `heartbeat-${loop}`,
          machine: 'heartbeat',
          state,
          messages: replay.fired[loop] ?? 0,
          diverged,
        })),
      ],
    };
  },
};
