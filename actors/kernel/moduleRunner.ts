/**
 * The effects of the kernel's facts on its modules. `init` runs a module's init once and reports
 * ready (with the facilities it produced) or failed; a running module's `fail` reports failed.
 * `stop` aborts an init still under way (its context's `stopping`), waits for init to settle,
 * runs the module's stop only if init succeeded, and reports stopped exactly once. An init that
 * ends by throwing because it was stopped is stopped, not failed.
 */
import { messageOf } from '../../events/index.ts';
import type { ModuleReport } from '../../machines/kernel/index.ts';
import type { FacilityRegistry } from './facilityRegistry.ts';
import type { KernelModule } from './kernelModule.ts';

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { code } : {};
};

/** Why a module's init was cut short: the kernel stopped it before it was ready. */
export class ModuleStopped extends Error {
  constructor(readonly module: string) {
    super(`module '${module}' was stopped before it was ready`);
    this.name = 'ModuleStopped';
  }
}

export class ModuleRunner {
  /** Each module's init, settled with whether it succeeded. */
  private readonly inits = new Map<string, Promise<boolean>>();
  private readonly stops = new Set<string>();
  /** Each module's stop signal, aborted by `stop`. */
  private readonly stopping = new Map<string, AbortController>();

  constructor(
    private readonly modules: ReadonlyMap<string, KernelModule>,
    private readonly facilities: FacilityRegistry,
    private readonly log: (line: string) => void,
    private readonly report: (report: ModuleReport) => void,
  ) {}

  init(name: string): void {
    if (this.inits.has(name)) return;
    const module = this.modules.get(name);
    const fail = (error: unknown) => this.report({ type: 'module.failed', module: name, error: messageOf(error), ...codeOf(error) });
    const stopping = new AbortController();
    this.stopping.set(name, stopping);
    const initialised = (async () => {
      if (!module) throw new Error('no such module is registered');
      await module.init(this.facilities.contextFor(module, this.log, fail, stopping.signal));
      const missing = module.provides.filter((f) => !this.facilities.has(f));
      if (missing.length > 0) throw new Error(`init finished without producing ${missing.map((f) => `'${f}'`).join(', ')}`);
      return module.provides;
    })().then(
      (provided) => {
        this.report({ type: 'module.ready', module: name, provided: [...provided] });
        return true;
      },
      (error: unknown) => {
        if (!(stopping.signal.aborted && error === stopping.signal.reason)) fail(error);
        return false;
      },
    );
    this.inits.set(name, initialised);
  }

  stop(name: string): void {
    if (this.stops.has(name)) return;
    this.stops.add(name);
    this.stopping.get(name)?.abort(new ModuleStopped(name));
    const initialised = this.inits.get(name) ?? Promise.resolve(false);
    void initialised.then(async (ready) => {
      try {
        if (ready) await this.modules.get(name)?.stop?.();
        this.report({ type: 'module.stopped', module: name });
      } catch (error) {
        this.report({ type: 'module.stopped', module: name, error: messageOf(error) });
      }
    });
  }
}
