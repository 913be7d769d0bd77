/** What the kernel's state means: its phase, the modules it waits for, the next one to stop. Pure. */
import type { KernelOutput, KernelPhase, KernelState } from './kernelTypes.ts';

/** Modules of the current layer that have reported neither ready nor failed. */
export const booting = (state: KernelState): readonly string[] =>
  (state.layers?.[state.layer] ?? []).filter((m) => !state.ready.includes(m) && !state.failed.includes(m));

/** The module whose stop was requested and has not reported stopped. */
export const awaitingStop = (state: KernelState): string | undefined => state.stopRequested.find((m) => !state.stopped.includes(m));

/** The latest-started module not yet asked to stop. */
export const nextToStop = (state: KernelState): string | undefined =>
  [...state.started].reverse().find((m) => !state.stopRequested.includes(m));

export const kernelPhase = (state: KernelState): KernelPhase => {
  if (state.finished) return 'stopped';
  if (state.layers === null) return 'waiting';
  if (state.failure || state.stopReason !== null) return 'stopping';
  return state.layer === state.layers.length - 1 && booting(state).length === 0 ? 'running' : 'starting';
};

/** Why the kernel stops, as KernelStopped records it. */
export const stopReasonOf = (state: KernelState): string =>
  state.failure ? `module ${state.failure.module} failed: ${state.failure.error}` : (state.stopReason ?? 'stopped');

export const kernelOutputOf = (state: KernelState): KernelOutput => ({
  failure: state.failure,
  reason: state.failure ? `module ${state.failure.module} failed` : (state.stopReason ?? 'stopped'),
});
