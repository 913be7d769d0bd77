/**
 * Turn figures: the kernel's own time per turn (everything but the model's), with a 10,000-
 * message context, journaled into a durable SQLite log (runTurn) against the same turn with
 * journaling disabled (the bare turn machine). The model answers at once, in process, so
 * what is measured is the kernel. Reported as p50 and p99 milliseconds per turn.
 */
import { createActor, fromPromise, toPromise } from 'xstate';
import type { CompletionRequest, CompletionResponse } from '../adapters/llm/llmTypes.ts';
import type { Provider } from '../adapters/llm/provider.ts';
import { ProviderChain } from '../actors/llm/providerChain.ts';
import { noHandlers, noTools, runTurn, turnMessages } from '../actors/turn/runTurn.ts';
import { provideTurn, type LlmAnswer, type LlmCall, type TurnMessage } from '../machines/turn/index.ts';
import type { BenchContext } from './context.ts';
import { makeFigure, type Figure } from './figures.ts';
import { log, percentile } from './measure.ts';
import { openHologramStore } from './workload.ts';

const CONTEXT_MESSAGES = 10_000;
const ANSWER: CompletionResponse = { text: 'Noted.', toolCalls: [], finishReason: 'stop' };

const history = (): TurnMessage[] =>
  Array.from({ length: CONTEXT_MESSAGES }, (_, i) => ({
    role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
    content: `message ${i}: a line of conversation about the weather, the garden and the week ahead`,
  }));

const instantModel: Provider = {
  name: 'instant',
  contextWindow: 1_000_000,
  credentialFingerprint: 'none',
  complete: async (_request: CompletionRequest) => ANSWER,
};

/** Figures turn.overhead.p50 and turn.overhead.p99 (ms per turn; lower is better). */
export const turnOverhead = async (ctx: BenchContext): Promise<Figure[]> => {
  const turns = Math.max(20, Math.min(200, Math.floor(ctx.appends / 10)));
  const context = history();
  const path = ctx.temp.file('turns');
  const store = openHologramStore(path);
  const chain = new ProviderChain([instantModel]);
  const bare = provideTurn({
    llm: fromPromise<LlmAnswer, LlmCall>(async () => ANSWER),
    tool: noTools,
    handler: noHandlers,
  });
  const journaled: number[] = [];
  const unjournaled: number[] = [];
  try {
    for (let i = -2; i < turns; i++) {
      let t0 = performance.now();
      const actor = createActor(bare, { input: { input: `turn ${i}`, messages: turnMessages(undefined, context) } }).start();
      await toPromise(actor);
      const bareMs = performance.now() - t0;
      t0 = performance.now();
      await runTurn({ store, chain, model: 'instant', input: `turn ${i}`, history: context });
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
  const note = `${turns} turns with a ${CONTEXT_MESSAGES}-message context, model answering in process; value journaled (runTurn on a durable log), baseline the bare turn machine`;
  return [50, 99].map((p) => {
    const value = percentile(journaled, p);
    const baseline = percentile(unjournaled, p);
    return makeFigure(`turn.overhead.p${p}`, 'ms/turn (lower is better)', value, baseline, { note });
  });
};
