/** The replayers of the actors under actors/: the kernel's boots, the scheduler, every turn, and the memory. */
import { SCHEDULER_STREAM } from '../../events/index.ts';
import { schedulerMachine } from '../../machines/scheduler/index.ts';
import { replayJournal } from '../journal/replayJournal.ts';
import { replayKernel } from '../kernel/replayKernel.ts';
import { replayMemory } from '../memory/replayMemory.ts';
import { heartbeatIntervalsFrom, memoryConfigFrom } from '../modules/memoryModule.ts';
import { schedulerConfigFrom } from '../modules/schedulerModule.ts';
import { replayTurn, turnStreams } from '../turn/replayTurn.ts';
import { ToolsetLedger } from '../turn/toolsets.ts';
import type { Replayer } from './replayer.ts';

export const kernelReplayer: Replayer = {
  name: 'kernel',
  replay: async (store) => {
    const boots = await replayKernel(store);
    const current = boots.filter((b) => !b.earlierFormat);
    const earlier = boots.length - current.length;
    return {
      name: 'kernel',
      verdicts: current.map((b) => ({ journal: b.journal, divergence: b.divergence })),
      messages: current.reduce((n, b) => n + b.messages, 0),
      ...(earlier > 0 ? { notes: [`${earlier} boot(s) recorded by an earlier build's format, not re-decided`] } : {}),
    };
  },
};

export const schedulerReplayer: Replayer = {
  name: 'scheduler',
  replay: async (store, settings) => {
    const replay = await replayJournal({
      store,
      stream: SCHEDULER_STREAM,
      logic: schedulerMachine,
      input: { config: schedulerConfigFrom(settings) },
    });
    return {
      name: 'scheduler',
      verdicts: [{ journal: SCHEDULER_STREAM, divergence: replay.divergence }],
      messages: replay.messages.length,
    };
  },
};

export const turnsReplayer: Replayer = {
  name: 'turns',
  replay: async (store) => {
    const toolsets = new ToolsetLedger(store);
    const replays = [];
    for (const stream of await turnStreams(store)) replays.push(await replayTurn(store, stream, toolsets));
    const current = replays.filter((r) => !r.earlierFormat);
    const earlier = replays.length - current.length;
    return {
      name: 'turns',
      verdicts: current.map((r) => ({ journal: r.stream, divergence: r.divergence })),
      messages: current.reduce((n, r) => n + r.messages, 0),
      ...(earlier > 0 ? { notes: [`${earlier} turn(s) recorded by an earlier build's format, not re-decided`] } : {}),
    };
  },
};

export const memoryReplayer: Replayer = {
  name: 'memory',
  replay: async (store, settings) => {
    const replay = await replayMemory(store, memoryConfigFrom(settings), heartbeatIntervalsFrom(settings));
    const notes = [
      ...(replay.messages > 0 ? [`${replay.decisions} decisions re-decided`] : []),
      ...(replay.earlier > 0 ? [`${replay.earlier} events an earlier build recorded before this journal began, applied as recorded`] : []),
    ];
    return {
      name: 'memory',
      verdicts: replay.messages > 0 ? [{ journal: 'memory', divergence: replay.divergence }] : [],
      messages: replay.messages,
      notes,
    };
  },
};
