/**
 * One turn as an XState machine: a thin wrapper around `decideTurn`, with one state per phase
 * so an inspector shows where the turn is. Every message is decided and folded in one step and
 * its facts are emitted for the log; a message that changes nothing leaves the context as it
 * was. Pure: effects are facts the runtime performs, time is not read here.
 */
import { enqueueActions, setup } from 'xstate';
import { decideTurn } from './decideTurn.ts';
import { initialTurnState, TURN_PHASES, type TurnPhase, type TurnState } from './turnState.ts';
import { EMPTY_TOOLSET, type Toolset, type TurnFact, type TurnInputMessage } from './turnTypes.ts';

export type TurnMachineInput = Readonly<{ toolset?: Toolset }>;

const toPhase = TURN_PHASES.map((phase) => ({
  guard: ({ context }: { context: TurnState }) => context.phase === phase,
  target: `#turn.${phase}`,
}));

const phaseState = (phase: TurnPhase) =>
  phase === 'done'
    ? { type: 'final' as const }
    : { always: toPhase.filter((_, i) => TURN_PHASES[i] !== phase), on: { '*': { actions: 'decide' as const } } };

export const turnMachine = setup({
  types: {
    context: {} as TurnState,
    events: {} as TurnInputMessage,
    emitted: {} as TurnFact,
    input: {} as TurnMachineInput,
  },
  actions: {
    decide: enqueueActions(({ context, event, enqueue }) => {
      const { state, facts } = decideTurn(context, event);
      if (state !== context) enqueue.assign(() => state);
      for (const fact of facts) enqueue.emit(fact);
    }),
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => initialTurnState(input.toolset ?? EMPTY_TOOLSET),
  initial: 'waiting',
  states: Object.fromEntries(TURN_PHASES.map((phase) => [phase, phaseState(phase)])) as Record<TurnPhase, ReturnType<typeof phaseState>>,
});
