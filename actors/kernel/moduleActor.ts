/**
 * The effectful side of a module child actor: runs `init`, reports ready (with the
 * facilities actually produced) or failed, and on STOP waits for init to settle, runs
 * `stop`, and reports stopped exactly once.
 */
import { fromCallback } from 'xstate';
import type { ModuleCommand, ModuleInput, ModuleReport } from '../../machines/kernel/index.ts';
import type { FacilityRegistry } from './facilityRegistry.ts';
import type { KernelModule } from './kernelModule.ts';
import { messageOf } from '../../events/index.ts';

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? { code } : {};
};

export const createModuleLogic = (modules: ReadonlyMap<string, KernelModule>, facilities: FacilityRegistry, log: (line: string) => void) =>
  fromCallback<ModuleCommand, ModuleInput>(({ input, sendBack, receive }) => {
    const module = modules.get(input.name);
    const report = (event: ModuleReport) => sendBack(event);
    if (!module) {
      report({ type: 'MODULE_FAILED', module: input.name, error: 'no such module is registered' });
      receive(() => report({ type: 'MODULE_STOPPED', module: input.name }));
      return;
    }
    const fail = (error: unknown) => report({ type: 'MODULE_FAILED', module: module.name, error: messageOf(error), ...codeOf(error) });
    const initialised = (async () => {
      await module.init(facilities.contextFor(module, log, fail));
      const missing = module.provides.filter((f) => !facilities.has(f));
      if (missing.length > 0) throw new Error(`init finished without producing ${missing.map((f) => `'${f}'`).join(', ')}`);
    })().then(
      () => {
        report({ type: 'MODULE_READY', module: module.name, provided: [...module.provides] });
        return true;
      },
      (error: unknown) => {
        fail(error);
        return false;
      },
    );
    let stopping = false;
    receive((command) => {
      if (command.type !== 'STOP' || stopping) return;
      stopping = true;
      void initialised.then(async (ready) => {
        try {
          if (ready) await module.stop?.();
          report({ type: 'MODULE_STOPPED', module: module.name });
        } catch (error) {
          report({ type: 'MODULE_STOPPED', module: module.name, error: messageOf(error) });
        }
      });
    });
  });
