/**
 * Applies one kernel fact to the state. Pure; the decider folds every fact it records with this,
 * so the state never says more than the log (the facts, and the messages that caused them).
 */
import type { KernelFact, KernelState } from './kernelTypes.ts';

export const initialKernelState: KernelState = {
  modules: [],
  given: [],
  layers: null,
  layer: -1,
  started: [],
  ready: [],
  failed: [],
  provided: [],
  stopRequested: [],
  stopped: [],
  failure: null,
  stopReason: null,
  finished: false,
};

export const evolveKernel = (state: KernelState, fact: KernelFact): KernelState => {
  switch (fact.type) {
    case 'KernelStarted':
      return { ...state, layers: fact.data.layers };
    case 'LayerStartRequested':
      return { ...state, layer: fact.data.layer, started: [...state.started, ...fact.data.modules] };
    case 'ModuleStarted':
      return { ...state, ready: [...state.ready, fact.data.module], provided: [...state.provided, ...fact.data.provides] };
    case 'ModuleFailed':
      return {
        ...state,
        failed: [...state.failed, fact.data.module],
        failure: state.failure ?? { module: fact.data.module, error: fact.data.error },
      };
    case 'ModuleStopRequested':
      return { ...state, stopRequested: [...state.stopRequested, fact.data.module] };
    case 'ModuleStopped':
      return { ...state, stopped: [...state.stopped, fact.data.module] };
    case 'KernelStopped':
      return { ...state, finished: true };
    default: {
      const unhandled: never = fact;
      throw new Error(`kernel: unhandled fact ${(unhandled as { type: string }).type}`);
    }
  }
};
