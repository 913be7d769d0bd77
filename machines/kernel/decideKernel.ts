/**
 * Decides what a message means for the kernel. A boot starts layer 0; a layer's modules start
 * in parallel, and the next layer starts when every one is ready and the facilities it requires
 * were produced. A failure or a stop request stops every started module in reverse start order,
 * one at a time, each exactly once, then the kernel. Starting a layer and stopping a module are
 * facts (`LayerStartRequested`, `ModuleStopRequested`) the runtime performs after the commit.
 * Pure: a message that changes nothing returns the state it was given.
 */
import { evolveKernel } from './evolveKernel.ts';
import { awaitingStop, booting, kernelPhase, nextToStop, stopReasonOf } from './kernelPhase.ts';
import type { BootMessage, KernelFact, KernelMessage, KernelState } from './kernelTypes.ts';

export type KernelDecision = Readonly<{ state: KernelState; facts: readonly KernelFact[] }>;

type Decision = { state: KernelState; facts: KernelFact[] };

const record = (d: Decision, fact: KernelFact): Decision => ({ state: evolveKernel(d.state, fact), facts: [...d.facts, fact] });

const layerOf = (state: KernelState, module: string): number => state.layers?.findIndex((layer) => layer.includes(module)) ?? -1;

/** Why the boot's layers cannot be run as they are, or null: each declared module exactly once, nothing undeclared. */
const planProblem = (boot: BootMessage): string | null => {
  const planned = boot.layers.flat();
  const declared = boot.modules.map((m) => m.name);
  const undeclared = planned.filter((m) => !declared.includes(m));
  if (undeclared.length > 0) return `it names modules nobody declared: ${undeclared.join(', ')}`;
  const twice = planned.filter((m, i) => planned.indexOf(m) !== i);
  if (twice.length > 0) return `it names modules twice: ${twice.join(', ')}`;
  const unplanned = declared.filter((m) => !planned.includes(m));
  if (unplanned.length > 0) return `it leaves out declared modules: ${unplanned.join(', ')}`;
  return null;
};

/** Starts layer `index`, or refuses it (each module lacking a facility fails) and stops. */
const startLayer = (d: Decision, index: number): Decision => {
  const modules = d.state.layers?.[index] ?? [];
  const refusals = modules.flatMap((name): KernelFact[] => {
    const needs = (d.state.modules.find((m) => m.name === name)?.requires ?? []).filter((f) => !d.state.provided.includes(f));
    if (needs.length === 0) return [];
    const error = `facilities not produced before layer ${index}: ${name} needs ${needs.map((f) => `'${f}'`).join(', ')}`;
    return [{ type: 'ModuleFailed', data: { module: name, layer: index, error, code: 'MISSING_FACILITY' } }];
  });
  if (refusals.length > 0) return advance(refusals.reduce(record, d));
  return advance(record(d, { type: 'LayerStartRequested', data: { layer: index, modules: [...modules] } }));
};

/** What follows from where the kernel stands: the next layer, the next stop, or the end. */
const advance = (d: Decision): Decision => {
  const { state } = d;
  switch (kernelPhase(state)) {
    case 'starting':
      return booting(state).length === 0 ? startLayer(d, state.layer + 1) : d;
    case 'stopping': {
      if (awaitingStop(state)) return d;
      const next = nextToStop(state);
      return next
        ? record(d, { type: 'ModuleStopRequested', data: { module: next } })
        : record(d, { type: 'KernelStopped', data: { reason: stopReasonOf(state) } });
    }
    default:
      return d;
  }
};

const boot = (d: Decision, message: BootMessage): Decision => {
  const { pid, dataDir, given, modules, layers } = message;
  const problem = planProblem(message);
  const stopReason = problem ? `the boot's layer plan cannot run: ${problem}` : null;
  const declared: Decision = { state: { ...d.state, modules, given, provided: [...given], stopReason }, facts: [] };
  return advance(record(declared, { type: 'KernelStarted', data: { pid, layers: layers.map((l) => [...l]), dataDir } }));
};

export const decideKernel = (state: KernelState, message: KernelMessage): KernelDecision => {
  const d: Decision = { state, facts: [] };
  const phase = kernelPhase(state);
  if (phase === 'stopped') return d;
  switch (message.type) {
    case 'boot':
      return phase === 'waiting' ? boot(d, message) : d;
    case 'module.ready': {
      if (!booting(state).includes(message.module)) return d;
      const declared = state.modules.find((m) => m.name === message.module)?.provides ?? [];
      const provides = declared.filter((f) => message.provided.includes(f));
      return advance(
        record(d, { type: 'ModuleStarted', data: { module: message.module, layer: layerOf(state, message.module), provides } }),
      );
    }
    case 'module.failed': {
      const { module, error, code } = message;
      if (!state.started.includes(module) || state.failed.includes(module) || state.stopped.includes(module)) return d;
      return advance(
        record(d, { type: 'ModuleFailed', data: { module, layer: layerOf(state, module), error, ...(code ? { code } : {}) } }),
      );
    }
    case 'module.stopped': {
      if (awaitingStop(state) !== message.module) return d;
      const { module, error } = message;
      return advance(record(d, { type: 'ModuleStopped', data: { module, ...(error ? { error } : {}) } }));
    }
    case 'stop':
      if (phase !== 'starting' && phase !== 'running') return d;
      return advance({ state: { ...state, stopReason: message.reason }, facts: [] });
    default: {
      const unhandled: never = message;
      throw new Error(`kernel: unknown message ${(unhandled as { type: string }).type}`);
    }
  }
};
