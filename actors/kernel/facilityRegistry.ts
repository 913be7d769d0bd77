/**
 * The kernel's shared state: facilities by name. A module reads only what it declared in
 * `requires` and writes only what it declared in `provides`; a facility another module guards
 * is stored as that module's wrap of it, so no reader can reach the unwrapped one.
 */
import type { FacilityTypes } from './facilities.ts';
import type { KernelModule, ModuleContext } from './kernelModule.ts';

export class FacilityRegistry {
  private readonly values = new Map<string, unknown>();

  private readonly wraps = new Map<string, (value: unknown) => unknown>();

  private readonly given: ReadonlySet<string>;

  constructor(given: Readonly<Record<string, unknown>>, optional: Readonly<Record<string, unknown>> = {}) {
    for (const [name, value] of Object.entries(given)) this.values.set(name, value);
    for (const [name, value] of Object.entries(optional)) if (value !== undefined) this.values.set(name, value);
    this.given = new Set([...Object.keys(given), ...Object.keys(optional)]);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  get<T>(name: string): T {
    if (!this.values.has(name)) throw new Error(`facility '${name}' has not been produced yet`);
    return this.values.get(name) as T;
  }

  contextFor(module: KernelModule, log: (line: string) => void, fail: (error: unknown) => void, stopping: AbortSignal): ModuleContext {
    return {
      require: <K extends keyof FacilityTypes>(facility: K): FacilityTypes[K] => {
        if (!module.requires.includes(facility)) {
          throw new Error(`module '${module.name}' reads facility '${facility}' without declaring it in requires`);
        }
        return this.get<FacilityTypes[K]>(facility);
      },
      // Only given facilities can be optional: a module-produced one must be declared in requires.
      optional: <K extends keyof FacilityTypes>(facility: K): FacilityTypes[K] | undefined =>
        this.given.has(facility) ? (this.values.get(facility) as FacilityTypes[K]) : undefined,
      provide: (facility, value) => {
        if (!module.provides.includes(facility)) {
          throw new Error(`module '${module.name}' provides '${facility}' without declaring it in provides`);
        }
        const wrap = this.wraps.get(facility);
        this.values.set(facility, wrap ? wrap(value) : value);
      },
      guard: (facility, wrap) => {
        if (!module.guards?.includes(facility)) {
          throw new Error(`module '${module.name}' guards '${facility}' without declaring it in guards`);
        }
        if (this.values.has(facility)) throw new Error(`module '${module.name}' guards '${facility}' after it was provided`);
        this.wraps.set(facility, wrap as (value: unknown) => unknown);
      },
      log,
      fail,
      stopping,
    };
  }
}
