import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { kernelMachine, type KernelFact, type KernelMessage } from '../../machines/kernel/index.ts';

const started = (messages: KernelMessage[]) => {
  const actor = createActor(kernelMachine);
  const facts: KernelFact[] = [];
  actor.on('*', (fact) => facts.push(fact));
  actor.start();
  for (const message of messages) actor.send(message);
  return { actor, facts };
};

const boot = (modules: { name: string; requires: string[]; provides: string[] }[], layers: string[][]): KernelMessage => ({
  type: 'boot',
  at: 0,
  pid: 1,
  dataDir: 'd',
  given: [],
  modules,
  layers,
});

describe('kernelMachine', () => {
  it('has no children: it asks for each layer and each stop as facts', () => {
    const { actor, facts } = started([boot([{ name: 'config', requires: [], provides: ['config'] }], [['config']])]);
    expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
    expect(facts.map((f) => f.type)).toEqual(['KernelStarted', 'LayerStartRequested']);
    expect(actor.getSnapshot().value).toBe('starting');
  });

  it('re-checks before each layer that the facilities it needs were actually produced', async () => {
    const modules = [
      { name: 'config', requires: [], provides: ['config'] },
      { name: 'llm', requires: ['config'], provides: ['llm'] },
    ];
    const { actor, facts } = started([
      boot(modules, [['config'], ['llm']]),
      { type: 'module.ready', at: 1, module: 'config', provided: [] },
      { type: 'module.stopped', at: 2, module: 'config' },
    ]);
    const output = await toPromise(actor);
    expect(output.failure?.error).toBe("facilities not produced before layer 1: llm needs 'config'");
    expect(facts.map((f) => f.type)).toEqual([
      'KernelStarted',
      'LayerStartRequested',
      'ModuleStarted',
      'ModuleFailed',
      'ModuleStopRequested',
      'ModuleStopped',
      'KernelStopped',
    ]);
  });

  it('reaches running when every layer is ready and stops on request', async () => {
    const { actor } = started([
      boot([{ name: 'config', requires: [], provides: ['config'] }], [['config']]),
      { type: 'module.ready', at: 1, module: 'config', provided: ['config'] },
    ]);
    expect(actor.getSnapshot().value).toBe('running');
    actor.send({ type: 'stop', at: 2, reason: 'bye' });
    expect(actor.getSnapshot().value).toBe('stopping');
    actor.send({ type: 'module.stopped', at: 3, module: 'config' });
    expect(await toPromise(actor)).toEqual({ failure: null, reason: 'bye' });
  });
});
