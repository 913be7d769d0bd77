/** The kernel decider, rule by rule: given the messages so far, when one more arrives, then these facts. */
import { describe, expect, it } from 'vitest';
import {
  decideKernel,
  initialKernelState,
  kernelPhase,
  type KernelMessage,
  type KernelState,
  type ModuleDeclaration,
} from '../../machines/kernel/index.ts';

const m = (name: string, requires: string[], provides: string[]): ModuleDeclaration => ({ name, requires, provides });

const MODULES = [m('config', ['data-dir'], ['config']), m('llm', ['config'], ['llm']), m('memory', ['config'], ['memory'])];
const LAYERS = [['config'], ['llm', 'memory']];

const boot = (modules = MODULES, layers = LAYERS, given = ['data-dir']): KernelMessage => ({
  type: 'boot',
  at: 1,
  pid: 7,
  dataDir: '/d',
  given,
  modules,
  layers,
});
const ready = (module: string, provided = MODULES.find((d) => d.name === module)?.provides ?? []): KernelMessage => ({
  type: 'module.ready',
  at: 2,
  module,
  provided,
});
const failed = (module: string, error = 'broke'): KernelMessage => ({ type: 'module.failed', at: 3, module, error });
const stopped = (module: string): KernelMessage => ({ type: 'module.stopped', at: 4, module });
const stop = (reason = 'bye'): KernelMessage => ({ type: 'stop', at: 5, reason });

const given = (...messages: KernelMessage[]): KernelState =>
  messages.reduce((s, message) => decideKernel(s, message).state, initialKernelState);
const when = (state: KernelState, message: KernelMessage) => decideKernel(state, message);
const RUNNING = [boot(), ready('config'), ready('llm'), ready('memory')];

describe('decideKernel', () => {
  it('a boot records KernelStarted and asks for layer 0', () => {
    expect(when(initialKernelState, boot()).facts).toEqual([
      { type: 'KernelStarted', data: { pid: 7, layers: LAYERS, dataDir: '/d' } },
      { type: 'LayerStartRequested', data: { layer: 0, modules: ['config'] } },
    ]);
  });

  it('a boot with no modules is running at once', () => {
    const { state, facts } = when(initialKernelState, boot([], []));
    expect(facts.map((f) => f.type)).toEqual(['KernelStarted']);
    expect(kernelPhase(state)).toBe('running');
  });

  it('the next layer starts only when every module of this one is ready', () => {
    const layer0 = [m('a', [], ['a']), m('b', [], ['b']), m('c', ['a', 'b'], ['c'])];
    const booted = given(boot(layer0, [['a', 'b'], ['c']], []));
    const oneReady = when(booted, ready('a', ['a']));
    expect(oneReady.facts).toEqual([{ type: 'ModuleStarted', data: { module: 'a', layer: 0, provides: ['a'] } }]);
    expect(when(oneReady.state, ready('b', ['b'])).facts).toEqual([
      { type: 'ModuleStarted', data: { module: 'b', layer: 0, provides: ['b'] } },
      { type: 'LayerStartRequested', data: { layer: 1, modules: ['c'] } },
    ]);
  });

  it('the last module ready makes the kernel running, with nothing else to do', () => {
    const { state, facts } = when(given(...RUNNING.slice(0, 3)), ready('memory'));
    expect(facts).toEqual([{ type: 'ModuleStarted', data: { module: 'memory', layer: 1, provides: ['memory'] } }]);
    expect(kernelPhase(state)).toBe('running');
  });

  it('re-checks before each layer that what it requires was produced, and refuses the layer otherwise', () => {
    expect(when(given(boot()), ready('config', [])).facts).toEqual([
      { type: 'ModuleStarted', data: { module: 'config', layer: 0, provides: [] } },
      {
        type: 'ModuleFailed',
        data: { module: 'llm', layer: 1, error: "facilities not produced before layer 1: llm needs 'config'", code: 'MISSING_FACILITY' },
      },
      {
        type: 'ModuleFailed',
        data: {
          module: 'memory',
          layer: 1,
          error: "facilities not produced before layer 1: memory needs 'config'",
          code: 'MISSING_FACILITY',
        },
      },
      { type: 'ModuleStopRequested', data: { module: 'config' } },
    ]);
  });

  it('a layer 0 that needs a facility nobody gave stops the kernel with nothing to stop', () => {
    const facts = when(initialKernelState, boot(MODULES, LAYERS, [])).facts;
    expect(facts.map((f) => f.type)).toEqual(['KernelStarted', 'ModuleFailed', 'KernelStopped']);
    expect(facts.at(-1)).toEqual({
      type: 'KernelStopped',
      data: { reason: "module config failed: facilities not produced before layer 0: config needs 'data-dir'" },
    });
  });

  it('a failure while starting stops the latest-started module first', () => {
    expect(when(given(boot(), ready('config'), ready('llm')), failed('memory', 'no disk')).facts).toEqual([
      { type: 'ModuleFailed', data: { module: 'memory', layer: 1, error: 'no disk' } },
      { type: 'ModuleStopRequested', data: { module: 'memory' } },
    ]);
  });

  it('a stop stops one module at a time in reverse start order, then the kernel', () => {
    const stopping = given(...RUNNING);
    expect(when(stopping, stop('received SIGTERM')).facts).toEqual([{ type: 'ModuleStopRequested', data: { module: 'memory' } }]);
    const memoryAsked = given(...RUNNING, stop('received SIGTERM'));
    expect(when(memoryAsked, stopped('memory')).facts).toEqual([
      { type: 'ModuleStopped', data: { module: 'memory' } },
      { type: 'ModuleStopRequested', data: { module: 'llm' } },
    ]);
    const configAsked = given(...RUNNING, stop('received SIGTERM'), stopped('memory'), stopped('llm'));
    const last = when(configAsked, stopped('config'));
    expect(last.facts).toEqual([
      { type: 'ModuleStopped', data: { module: 'config' } },
      { type: 'KernelStopped', data: { reason: 'received SIGTERM' } },
    ]);
    expect(kernelPhase(last.state)).toBe('stopped');
  });

  it('a second stop, or a stop after a failure, changes nothing', () => {
    const stopping = given(...RUNNING, stop());
    expect(when(stopping, stop('again'))).toEqual({ state: stopping, facts: [] });
    const failing = given(...RUNNING, failed('llm'));
    expect(when(failing, stop()).state).toBe(failing);
  });

  it('a stopped report from a module not being stopped changes nothing', () => {
    const stopping = given(...RUNNING, stop());
    expect(when(stopping, stopped('config')).state).toBe(stopping);
    const running = given(...RUNNING);
    expect(when(running, stopped('llm')).state).toBe(running);
  });

  it('a module that becomes ready while the kernel stops is recorded, and no further layer starts', () => {
    const failing = given(boot(), ready('config'), failed('llm'));
    expect(when(failing, ready('memory')).facts).toEqual([
      { type: 'ModuleStarted', data: { module: 'memory', layer: 1, provides: ['memory'] } },
    ]);
  });

  it('a failure while stopping is recorded once, asks for no second stop, and the first failure stays the reason', () => {
    const failing = given(...RUNNING, failed('llm', 'first'));
    const second = when(failing, failed('config', 'second'));
    expect(second.facts).toEqual([{ type: 'ModuleFailed', data: { module: 'config', layer: 0, error: 'second' } }]);
    expect(when(second.state, failed('config', 'third')).state).toBe(second.state);
    const lastStop = given(...RUNNING, failed('llm', 'first'), failed('config', 'second'), stopped('memory'), stopped('llm'));
    expect(when(lastStop, stopped('config')).facts.at(-1)).toEqual({ type: 'KernelStopped', data: { reason: 'module llm failed: first' } });
  });

  it('reports of modules that are not starting change nothing', () => {
    const booted = given(boot());
    for (const message of [ready('llm'), ready('nobody'), failed('llm'), failed('nobody'), boot()]) {
      expect(when(booted, message).state).toBe(booted);
    }
    const configReady = given(boot(), ready('config'));
    expect(when(configReady, ready('config')).state).toBe(configReady);
  });

  it('a boot whose layers do not match its declarations stops at once, saying why', () => {
    const facts = when(initialKernelState, boot(MODULES, [['config'], ['llm', 'ghost']])).facts;
    expect(facts.map((f) => f.type)).toEqual(['KernelStarted', 'KernelStopped']);
    expect(facts[1]).toEqual({
      type: 'KernelStopped',
      data: { reason: "the boot's layer plan cannot run: it names modules nobody declared: ghost" },
    });
  });

  it('a stopped kernel takes no more messages', () => {
    const end = given(...RUNNING, stop(), stopped('memory'), stopped('llm'), stopped('config'));
    for (const message of [boot(), stop(), ready('config'), failed('config'), stopped('config')]) {
      expect(when(end, message)).toEqual({ state: end, facts: [] });
    }
  });
});
