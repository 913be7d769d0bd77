import { createActor, fromCallback, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { kernelMachine, type KernelFact, type ModuleCommand, type ModuleInput } from '../../machines/kernel/index.ts';

/** Module logic that reports ready at once, claiming to have produced `claims[name]`. */
const claiming = (claims: Record<string, string[]>) =>
  fromCallback<ModuleCommand, ModuleInput>(({ input, sendBack, receive }) => {
    sendBack({ type: 'MODULE_READY', module: input.name, provided: claims[input.name] ?? [] });
    receive(() => sendBack({ type: 'MODULE_STOPPED', module: input.name }));
  });

describe('kernelMachine', () => {
  it('re-checks before each layer that the facilities it needs were actually produced', async () => {
    const modules = [
      { name: 'config', requires: [], provides: ['config'] },
      { name: 'llm', requires: ['config'], provides: ['llm'] },
    ];
    const actor = createActor(kernelMachine.provide({ actors: { module: claiming({ config: [] }) } }), {
      input: { modules, layers: [['config'], ['llm']], given: [] },
    });
    const facts: KernelFact[] = [];
    actor.on('*', (fact) => facts.push(fact));
    actor.start();
    const output = await toPromise(actor);
    expect(output.failure?.error).toBe("facilities not produced before layer 1: llm needs 'config'");
    expect(facts.map((f) => f.type)).toEqual(['ModuleStarted', 'ModuleStopped', 'KernelStopped']);
  });

  it('reaches running when every layer is ready and stops on request', async () => {
    const modules = [{ name: 'config', requires: [], provides: ['config'] }];
    const actor = createActor(kernelMachine.provide({ actors: { module: claiming({ config: ['config'] }) } }), {
      input: { modules, layers: [['config']], given: [] },
    }).start();
    expect(actor.getSnapshot().value).toBe('running');
    actor.send({ type: 'STOP', reason: 'bye' });
    expect(await toPromise(actor)).toEqual({ failure: null, reason: 'bye' });
  });
});
