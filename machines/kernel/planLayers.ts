/**
 * Resolves the module graph into layers: a module sits in the first layer after every
 * provider of what it requires. Missing, duplicate and cyclic facilities are refused.
 * Pure; the same declarations always give the same layers (names sorted within a layer).
 */
import { KernelAssemblyError } from './assemblyErrors.ts';
import type { ModuleDeclaration } from './moduleDeclaration.ts';

export type ModuleLayers = readonly (readonly string[])[];

const findCycle = (remaining: readonly ModuleDeclaration[], providerOf: Map<string, string>): string => {
  const byName = new Map(remaining.map((m) => [m.name, m]));
  const path: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string): string | undefined => {
    if (visiting.has(name)) return [...path.slice(path.indexOf(name)), name].join(' → ');
    visiting.add(name);
    path.push(name);
    for (const facility of byName.get(name)!.requires) {
      const provider = providerOf.get(facility);
      if (provider && byName.has(provider)) {
        const cycle = visit(provider);
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
  for (const module of modules) {
    for (const facility of module.requires) {
      if (!providerOf.has(facility)) {
        throw fail('MISSING_FACILITY', `module '${module.name}' requires facility '${facility}', which nothing provides`);
      }
    }
  }
  const ready = new Set(given);
  const layers: string[][] = [];
  let remaining = [...modules];
  while (remaining.length > 0) {
    const layer = remaining.filter((m) => m.requires.every((f) => ready.has(f)));
    if (layer.length === 0) {
      throw fail('FACILITY_CYCLE', `modules depend on each other in a cycle: ${findCycle(remaining, providerOf)}`);
    }
    for (const module of layer) for (const facility of module.provides) ready.add(facility);
    layers.push(layer.map((m) => m.name).sort());
    remaining = remaining.filter((m) => !layer.includes(m));
  }
  return layers;
};

/** The layers as the daemon prints them at start and `homed graph` shows them. */
export const formatLayers = (layers: ModuleLayers): string => layers.map((layer, i) => `layer ${i}  ${layer.join(', ')}`).join('\n');
