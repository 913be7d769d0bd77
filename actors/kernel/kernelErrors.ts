/** Why a kernel did not start. */
import { HologramError } from '../../events/index.ts';
import type { ModuleFailure } from '../../machines/kernel/index.ts';

export class KernelBootFailed extends HologramError {
  readonly code = 'KERNEL_BOOT_FAILED';
  constructor(readonly failure: ModuleFailure) {
    super(`the kernel did not start: module '${failure.module}' failed: ${failure.error}`);
  }
}

export class KernelStoppedWhileStarting extends HologramError {
  readonly code = 'KERNEL_STOPPED_WHILE_STARTING';
  constructor(readonly reason: string) {
    super(`the kernel stopped before every layer started (${reason}); its modules were stopped in reverse order`);
  }
}
