/**
 * The turn decider against a random world (fast-check `commands`): over random toolsets, the
 * world answers what the turn asked for (`LlmRequested`, `StageStarted`, `ToolCalled`) in any
 * order with any content — text, calls to known and unknown tools, model errors, streamed
 * pieces, handler changes, denials, rewrites, answers, requests for approval, errors, stage
 * timeouts, tool results with the security proxy's verdicts, a person's approvals and refusals —
 * and sends stops of every reason and junk (a stale round, a finished run, a settled handler,
 * a done call, a second request, an answer to no waiting approval). After every message the driver checks junk changes nothing
 * and real answers are never ignored, nothing follows TurnCompleted, the XState machine emits
 * the decider's facts, and the turn always waits for something (`test/support/turnDriver.ts`).
 * Then the world answers everything still outstanding: the turn must complete within a bound
 * from maxRounds, and its facts must obey `test/support/turnFactRules.ts`.
 *
 * Runs: at least 200 per property; `FC_RUNS=n` raises it. On a failure fast-check prints the
 * seed, the path and the shrunk toolset, request, steps and drain plan; replay it with
 * `FC_SEED=<seed> FC_PATH=<path> npx vitest run test/machines/turn.property.test.ts`.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { type Toolset, type TurnInputEvent, TURN_RULES } from '../../machines/turn/index.ts';
import {
  drainArb,
  duplicateHandlerToolsetArb,
  guardedToolsetArb,
  temperArb,
  MAX_CALLS,
  requestArb,
  stepArbs,
  toolsetArb,
  type DrainPlan,
  type HandlerReply,
  type Step,
  type TurnRequestSpec,
} from '../support/turnArbitraries.ts';
import { TurnDriver } from '../support/turnDriver.ts';
import { checkNoToolAfterAnswer, checkTurn, llmCallsAllowed } from '../support/turnFactRules.ts';

const RUNS = Math.max(200, Number(process.env.FC_RUNS ?? 0));
/** About 10 ms a run here; room for a slower machine. */
const TIMEOUT = { timeout: Math.max(60_000, RUNS * 50) };
const replay = {
  ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
  ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
};

const requestMessage = (r: TurnRequestSpec): TurnInputEvent => ({
  type: 'TurnRequested',
  data: {
    turnId: 'p',
    rules: TURN_RULES,
    input: r.input,
    model: 'm',
    maxRounds: r.maxRounds,
    ...(r.stageTimeoutMs !== undefined ? { stageTimeoutMs: r.stageTimeoutMs } : {}),
    ...(r.systemPrompt !== undefined ? { systemPrompt: r.systemPrompt } : {}),
    ...(r.history.length > 0 ? { history: [...r.history] } : {}),
    toolset: 'ts',
  },
});

/**
 * Answers a world needs at most to finish a turn from its start: each stage run takes one per
 * handler (or one timeout), each round one model answer and at most MAX_CALLS calls, each with
 * its two stages and a result.
 */
const answersNeeded = (toolset: Toolset, maxRounds: number): number => {
  const h = (stage: keyof Toolset['handlers']) => toolset.handlers[stage]?.length ?? 0;
  // A call: its stages, perhaps a person's approval, and its result.
  const round = 1 + h('post_action') + MAX_CALLS * (h('before_toolcall') + 2 + h('after_toolcall'));
  return h('on_input') + h('pre_action') + llmCallsAllowed(maxRounds) * round + h('before_output') + h('after_output');
};

class WorldStep implements fc.Command<TurnDriver, null> {
  constructor(readonly step: Step) {}
  check = (driver: Readonly<TurnDriver>) => driver.world.messageFor(this.step) !== undefined;
  run(driver: TurnDriver): void {
    driver.deliver(driver.world.messageFor(this.step)!);
  }
  toString = () => {
    const { t, ...rest } = this.step;
    return `${t}${JSON.stringify(rest)}`;
  };
}

/**
 * A world: how it answers what is left, and the steps it takes, with its handlers' temper.
 * The commands come last: fast-check 4.11 clones a tuple only up to its last cloneable item.
 */
const worldOf = (tempers: fc.Arbitrary<readonly HandlerReply[]>) =>
  tempers.chain((temper) =>
    fc.tuple(
      drainArb(temper),
      fc.commands(
        stepArbs(temper).map((arb) => arb.map((step) => new WorldStep(step))),
        { maxCommands: 40, size: 'medium' },
      ),
    ),
  );
const worldArb = worldOf(temperArb);
/** Handlers that answer some calls of a round and let others through. */
const answeringNowAndThenArb = worldOf(temperArb.filter((t) => t.includes('response') && t.some((r) => r !== 'response')));
const patientWorldArb = temperArb.chain((temper) => drainArb(temper));

const runTurn = (toolset: Toolset, request: TurnRequestSpec, cmds: Iterable<fc.Command<TurnDriver, null>>, plan: DrainPlan) => {
  const driver = new TurnDriver(toolset);
  driver.deliver(requestMessage(request));
  fc.modelRun(() => ({ model: driver, real: null }), cmds);
  driver.drain(plan, answersNeeded(toolset, request.maxRounds));
  checkTurn(toolset, request, driver.journal);
  // Once done, nothing moves it: a stop, a second request, a late answer.
  driver.deliver(driver.world.stop('stop'));
  driver.deliver(requestMessage(request));
  return driver;
};

describe('turn decider (property)', () => {
  it(`keeps its rules under any world, and completes once the world answers everything (${RUNS} runs)`, TIMEOUT, () => {
    fc.assert(
      fc.property(fc.oneof(toolsetArb, guardedToolsetArb), requestArb(), worldArb, (toolset, request, [plan, cmds]) => {
        runTurn(toolset, request, cmds, plan);
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`completes when the world answers every request at once, without stops or junk (${RUNS} runs)`, TIMEOUT, () => {
    fc.assert(
      fc.property(fc.oneof(toolsetArb, guardedToolsetArb), requestArb(), patientWorldArb, (toolset, request, plan) => {
        runTurn(toolset, request, [], plan);
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`calls no tool once a handler answered the turn (${RUNS} runs)`, TIMEOUT, () => {
    fc.assert(
      fc.property(guardedToolsetArb, requestArb(), answeringNowAndThenArb, (toolset, request, [plan, cmds]) => {
        checkNoToolAfterAnswer(runTurn(toolset, request, cmds, plan).journal);
      }),
      { numRuns: RUNS, ...replay },
    );
  });

  it(`fails cleanly, and still completes, on a stage it cannot run (a bad timeout, a handler listed twice) (${RUNS} runs)`, TIMEOUT, () => {
    fc.assert(
      fc.property(
        fc.oneof(toolsetArb, duplicateHandlerToolsetArb),
        requestArb(fc.constantFrom(undefined, 1_000, 0, -1)),
        worldArb,
        (toolset, request, [plan, cmds]) => {
          runTurn(toolset, request, cmds, plan);
        },
      ),
      { numRuns: RUNS, ...replay },
    );
  });
});
