/** Runs one stage with handlers the test settles by hand, on a simulated clock: nothing settles or times out unless the test says so. */
import { SimulatedClock, createActor, fromPromise, toPromise } from 'xstate';
import {
  stagePipelineMachine,
  type HandlerInput,
  type HandlerResolution,
  type StageFact,
  type StagePipelineInput,
} from '../../machines/stagePipeline/index.ts';

type Settle = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

/** Lets pending promise callbacks and the actor's reactions to them run. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const runStage = (input: StagePipelineInput) => {
  const settlers = new Map<string, Settle>();
  const started: string[] = [];
  const seen: HandlerInput[] = [];
  const handler = fromPromise<HandlerResolution, HandlerInput>(
    ({ input: handlerInput }) =>
      new Promise((resolve, reject) => {
        started.push(handlerInput.handlerId);
        seen.push(handlerInput);
        settlers.set(handlerInput.handlerId, { resolve: (v) => resolve(v as HandlerResolution), reject });
      }),
  );
  const clock = new SimulatedClock();
  const actor = createActor(stagePipelineMachine.provide({ actors: { handler } }), { input, clock });
  const facts: StageFact[] = [];
  actor.on('*', (fact) => facts.push(fact));
  actor.start();
  const settler = (id: string) => {
    const s = settlers.get(id);
    if (!s) throw new Error(`handler '${id}' was never started (started: ${started.join(', ') || 'none'})`);
    return s;
  };
  return {
    actor,
    clock,
    started,
    seen,
    facts,
    /** Settles handlers one at a time, letting the actor react after each, in the order given. */
    async settle(...steps: [id: string, how: 'resolve' | 'reject', value?: unknown][]) {
      for (const [id, how, value] of steps) {
        settler(id)[how](value);
        await flush();
      }
    },
    output: () => toPromise(actor),
  };
};
