/**
 * The kernel as an XState machine: a thin wrapper around `decideKernel`, with one state per
 * phase so an inspector shows where the boot is. It has no children: starting and stopping
 * modules are facts the runtime performs, and their outcomes come back as messages. Pure.
 */
import { enqueueActions, setup } from 'xstate';
import { decideKernel } from './decideKernel.ts';
import { initialKernelState } from './evolveKernel.ts';
import { kernelOutputOf, kernelPhase } from './kernelPhase.ts';
import type { KernelFact, KernelMessage, KernelOutput, KernelPhase, KernelState } from './kernelTypes.ts';

const PHASES: readonly KernelPhase[] = ['waiting', 'starting', 'running', 'stopping', 'stopped'];

const toPhase = PHASES.map((phase) => ({
  guard: ({ context }: { context: KernelState }) => kernelPhase(context) === phase,
  target: `#kernel.${phase}`,
}));

const phaseState = (phase: KernelPhase) =>
  phase === 'stopped'
    ? { type: 'final' as const }
    : { always: toPhase.filter((_, i) => PHASES[i] !== phase), on: { '*': { actions: 'decide' as const } } };

export const kernelMachine = setup({
  types: {
    context: {} as KernelState,
    events: {} as KernelMessage,
    emitted: {} as KernelFact,
    output: {} as KernelOutput,
  },
  actions: {
    decide: enqueueActions(({ context, event, enqueue }) => {
      const { state, facts } = decideKernel(context, event);
      if (state !== context) enqueue.assign(() => state);
      for (const fact of facts) enqueue.emit(fact);
    }),
  },
}).createMachine({
  id: 'kernel',
  context: initialKernelState,
  initial: 'waiting',
  states: Object.fromEntries(PHASES.map((phase) => [phase, phaseState(phase)])) as Record<KernelPhase, ReturnType<typeof phaseState>>,
  output: ({ context }) => kernelOutputOf(context),
});
