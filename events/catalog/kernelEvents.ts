/** Events of the kernel's own lifecycle: boot, module lifecycle, shutdown. Stream: `kernel`. */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, integer, object, optional, string } from '../schema.ts';

export const KERNEL_STREAM = 'kernel';

export const kernelEvents = {
  KernelStarted: defineEvent('KernelStarted', object({ pid: integer(), layers: array(array(string())), dataDir: string() })),
  ModuleStarted: defineEvent('ModuleStarted', object({ module: string(), layer: integer(), provides: array(string()) })),
  ModuleFailed: defineEvent('ModuleFailed', object({ module: string(), layer: integer(), error: string(), code: optional(string()) })),
  ModuleStopped: defineEvent('ModuleStopped', object({ module: string(), error: optional(string()) })),
  KernelStopped: defineEvent('KernelStopped', object({ reason: string() })),
} as const;

export type KernelEvent = EventUnion<typeof kernelEvents>;
