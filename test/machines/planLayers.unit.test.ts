import { describe, expect, it } from 'vitest';
import { KernelAssemblyError, planLayers, formatLayers, type ModuleDeclaration } from '../../machines/kernel/index.ts';

const m = (name: string, requires: string[], provides: string[]): ModuleDeclaration => ({ name, requires, provides });

const assemblyError = (modules: ModuleDeclaration[], given: string[] = []): KernelAssemblyError => {
  try {
    planLayers(modules, given);
  } catch (error) {
    if (error instanceof KernelAssemblyError) return error;
    throw error;
  }
  throw new Error('expected the assembly to fail');
};

describe('planLayers', () => {
  it('places each module in the first layer after the providers of what it requires', () => {
    const layers = planLayers([
      m('agent', ['llm', 'memory'], ['agent']),
      m('llm', ['config'], ['llm']),
      m('config', [], ['config']),
      m('memory', ['config'], ['memory']),
      m('device', ['agent'], ['device']),
    ]);
    expect(layers).toEqual([['config'], ['llm', 'memory'], ['agent'], ['device']]);
    expect(formatLayers(layers)).toBe('layer 0  config\nlayer 1  llm, memory\nlayer 2  agent\nlayer 3  device');
  });

  it('starts the provider of a guarded facility after its guard; a guard of what this kernel lacks guards nothing', () => {
    const guard: ModuleDeclaration = { name: 'security', requires: ['config'], provides: ['security'], guards: ['llm'] };
    expect(planLayers([m('llm', ['config'], ['llm']), m('config', [], ['config']), guard])).toEqual([['config'], ['security'], ['llm']]);
    expect(planLayers([m('config', [], ['config']), { ...guard, guards: ['tools'] }])).toEqual([['config'], ['security']]);
    expect(assemblyError([m('config', [], ['config']), { ...guard, guards: ['clock'] }], ['clock']).message).toContain(
      "guards facility 'clock', which is given before any module starts",
    );
    // A guard that needs what it guards can never start.
    expect(assemblyError([m('llm', [], ['llm']), m('config', [], ['config']), { ...guard, requires: ['llm'] }]).code).toBe(
      'FACILITY_CYCLE',
    );
  });

  it('counts facilities given before assembly as ready', () => {
    expect(planLayers([m('config', ['data-dir'], ['config'])], ['data-dir'])).toEqual([['config']]);
  });

  it('refuses a missing facility and lists every declared facility', () => {
    const error = assemblyError([m('config', [], ['config']), m('llm', ['confg'], ['llm'])], ['event-log']);
    expect(error.code).toBe('MISSING_FACILITY');
    expect(error.message).toContain("requires facility 'confg'");
    expect(error.message).toContain('config (by config)');
    expect(error.message).toContain('llm (by llm)');
    expect(error.message).toContain('event-log (given before assembly)');
  });

  it('refuses a facility provided twice', () => {
    const error = assemblyError([m('a', [], ['x']), m('b', [], ['x'])]);
    expect(error.code).toBe('DUPLICATE_FACILITY');
    expect(error.message).toContain("'x' is provided by both a and b");
  });

  it('refuses a cycle and names it', () => {
    const error = assemblyError([m('a', ['y'], ['x']), m('b', ['x'], ['y']), m('c', [], ['z'])]);
    expect(error.code).toBe('FACILITY_CYCLE');
    expect(error.message).toMatch(/a → b → a|b → a → b/);
    expect(error.message).toContain('z (by c)');
  });

  it('refuses a module registered twice', () => {
    expect(assemblyError([m('a', [], []), m('a', [], [])]).code).toBe('DUPLICATE_MODULE');
  });
});
