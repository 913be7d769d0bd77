/**
 * Turn figures: the kernel's own time per turn (everything but the model's), with a 10,000-
 * message context, journaled into a durable SQLite log (a TurnActor) against the same turn with
 * journaling disabled (the bare turn machine). The model answers at once, in process, so
 * what is measured is the kernel. Reported as p50 and p99 milliseconds per turn.
 */
import { createActor } from 'xstate';
import { randomIds, systemClock, systemTimers } from '../actors/clock/systemClock.ts';
import { TurnActor, type TurnEffects } from '../actors/turn/turnActor.ts';
import { EMPTY_TOOLSET, turnMachine, type LlmAnswer, type TurnMessage } from '../machines/turn/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, percentile } from './measure.ts';
import { openHologramStore } from './workload.ts';

const CONTEXT_MESSAGES = 10_000;
const ANSWER: LlmAnswer = { text: 'Noted.', toolCalls: [], finishReason: 'stop' };

const history = (): TurnMessage[] =>
  Array.from({ length: CONTEXT_MESSAGES }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${i}: a line of conversation about the weather, the garden and the week ahead`,
  }));

const instantModel: TurnEffects = {
  complete: async () => ANSWER,
  callTool: async () => ({ content: '' }),
  runHandler: async () => null,
};

/** The same turn decided by the bare machine: the model's answer handed to it at once, nothing journaled. */
const bareTurn = (input: string, history: readonly TurnMessage[]): void => {
  const actor = createActor(turnMachine, { input: { toolset: EMPTY_TOOLSET } }).start();
  actor.send({
    type: 'TurnRequested',
    data: { turnId: 'bare', input, model: 'instant', maxRounds: 8, history: [...history], toolset: 'bench' },
    at: 0,
  });
  actor.send({ type: 'LlmAnswerRecorded', data: { round: 0, answer: ANSWER }, at: 0 });
  if (actor.getSnapshot().status !== 'done') throw new Error('the bare turn did not finish');
};

/** Figures turn.overhead.p50 and turn.overhead.p99 (ms per turn; lower is better). */
export const turnOverhead = async (ctx: BenchContext): Promise<Figure[]> => {
  const turns = Math.max(20, Math.min(200, Math.floor(ctx.appends / 10)));
  const context = history();
  const path = ctx.temp.file('turns');
  const store = openHologramStore(path);
  const journaled: number[] = [];
  const unjournaled: number[] = [];
  try {
    for (let i = -2; i < turns; i++) {
      let t0 = performance.now();
      bareTurn(`turn ${i}`, context);
      const bareMs = performance.now() - t0;
      t0 = performance.now();
      const turnId = randomIds.next();
      const turn = new TurnActor({
        store,
        stream: `turn-${turnId}`,
        toolset: EMPTY_TOOLSET,
        effects: instantModel,
        clock: systemClock,
        timers: systemTimers,
      });
      await turn.start({ turnId, input: `turn ${i}`, model: 'instant', maxRounds: 8, history: context, toolset: 'bench' });
      await turn.done;
      await turn.settled();
      const journaledMs = performance.now() - t0;
      if (i >= 0) {
        unjournaled.push(bareMs);
        journaled.push(journaledMs);
      }
      if ((i + 1) % 50 === 0) log(`turn.overhead: ${i + 1}/${turns} turns`);
    }
  } finally {
    await store.close();
    ctx.temp.remove(path);
  }
  const note = `${turns} turns with a ${CONTEXT_MESSAGES}-message context, model answering in process; value journaled (a TurnActor on a durable log), baseline the bare turn machine`;
  return [50, 99].map((p) => {
    const value = percentile(journaled, p);
    const baseline = percentile(unjournaled, p);
    return makeFigure(`turn.overhead.p${p}`, 'ms/turn (lower is better)', value, baseline, { note });
  });
};
