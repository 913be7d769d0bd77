/**
 * Resolves the module graph into layers: a module sits in the first layer after every
 * provider of what it requires, and after every module that guards what it provides (a guard
 * of a facility no module of this kernel provides guards nothing). Missing, duplicate and cyclic
 * facilities are refused; so is a facility guarded twice, or one given before assembly.
 * Pure; the same declarations always give the same layers (names sorted within a layer).
 */
import { KernelAssemblyError } from './assemblyErrors.ts';
import type { ModuleDeclaration } from './moduleDeclaration.ts';

export type ModuleLayers = readonly (readonly string[])[];

/** The modules `module` must start after: the providers of what it requires, the guards of what it provides. */
const predecessorsOf = (module: ModuleDeclaration, providerOf: Map<string, string>, guardOf: Map<string, string>): string[] => [
  ...module.requires.flatMap((f) => providerOf.get(f) ?? []),
  ...module.provides.flatMap((f) => guardOf.get(f) ?? []),
];

const findCycle = (remaining: readonly ModuleDeclaration[], providerOf: Map<string, string>, guardOf: Map<string, string>): string => {
  const byName = new Map(remaining.map((m) => [m.name, m]));
  const path: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string): string | undefined => {
    if (visiting.has(name)) return [...path.slice(path.indexOf(name)), name].join(' → ');
    visiting.add(name);
    path.push(name);
    for (const before of predecessorsOf(byName.get(name)!, providerOf, guardOf)) {
      if (byName.has(before)) {
        const cycle = visit(before);
        if (cycle) return cycle;
      }
    }
    path.pop();
    visiting.delete(name);
    return undefined;
  };
  for (const module of remaining) {
    const cycle = visit(module.name);
    if (cycle) return cycle;
  }
  return remaining.map((m) => m.name).join(', ');
};

export const planLayers = (modules: readonly ModuleDeclaration[], given: readonly string[] = []): ModuleLayers => {
  const fail = (code: KernelAssemblyError['code'], detail: string) => new KernelAssemblyError(code, detail, modules, given);
  const names = new Set<string>();
  const providerOf = new Map<string, string>(given.map((f) => [f, '(given)']));
  for (const module of modules) {
    if (names.has(module.name)) throw fail('DUPLICATE_MODULE', `module '${module.name}' is registered twice`);
    names.add(module.name);
    for (const facility of module.provides) {
      const other = providerOf.get(facility);
      if (other) throw fail('DUPLICATE_FACILITY', `facility '${facility}' is provided by both ${other} and ${module.name}`);
      providerOf.set(facility, module.name);
    }
  }
  const guardOf = new Map<string, string>();
  for (const module of modules) {
    for (const facility of module.guards ?? []) {
      const other = guardOf.get(facility);
      if (other) throw fail('DUPLICATE_FACILITY', `facility '${facility}' is guarded by both ${other} and ${module.name}`);
      if (providerOf.get(facility) === '(given)') {
        throw fail('DUPLICATE_FACILITY', `module '${module.name}' guards facility '${facility}', which is given before any module starts`);
      }
      guardOf.set(facility, module.name);
    }
  }
  for (const module of modules) {
    for (const facility of module.requires) {
      if (!providerOf.has(facility)) {
        throw fail('MISSING_FACILITY', `module '${module.name}' requires facility '${facility}', which nothing provides`);
      }
    }
  }
  const placed = new Set(['(given)']);
  const layers: string[][] = [];
  let remaining = [...modules];
  while (remaining.length > 0) {
    const layer = remaining.filter((m) => predecessorsOf(m, providerOf, guardOf).every((p) => placed.has(p)));
    if (layer.length === 0) {
      throw fail('FACILITY_CYCLE', `modules depend on each other in a cycle: ${findCycle(remaining, providerOf, guardOf)}`);
    }
    for (const module of layer) placed.add(module.name);
    layers.push(layer.map((m) => m.name).sort());
    remaining = remaining.filter((m) => !layer.includes(m));
  }
  return layers;
};

/** The layers as the daemon prints them at start and `homed graph` shows them. */
export const formatLayers = (layers: ModuleLayers): string => layers.map((layer, i) => `layer ${i}  ${layer.join(', ')}`).join('\n');
