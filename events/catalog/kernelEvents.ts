/**
 * Events of the kernel's own lifecycle: boot, module lifecycle, shutdown, and the two effects
 * the kernel asks of its runtime (start a layer's modules, stop one module). Stream: `kernel`,
 * where every boot of the data dir follows the one before.
 */
import { defineEvent, type EventUnion } from '../defineEvent.ts';
import { array, integer, object, optional, string } from '../schema.ts';

export const KERNEL_STREAM = 'kernel';

export const kernelEvents = {
  KernelStarted: defineEvent('KernelStarted', object({ pid: integer(), layers: array(array(string())), dataDir: string() })),
  /** The runtime inits every module of the layer, in parallel. */
  LayerStartRequested: defineEvent('LayerStartRequested', object({ layer: integer(), modules: array(string()) })),
  ModuleStarted: defineEvent('ModuleStarted', object({ module: string(), layer: integer(), provides: array(string()) })),
  ModuleFailed: defineEvent('ModuleFailed', object({ module: string(), layer: integer(), error: string(), code: optional(string()) })),
  /** The runtime stops the module (once its init settled). */
  ModuleStopRequested: defineEvent('ModuleStopRequested', object({ module: string() })),
  ModuleStopped: defineEvent('ModuleStopped', object({ module: string(), error: optional(string()) })),
  KernelStopped: defineEvent('KernelStopped', object({ reason: string() })),
} as const;

export type KernelEvent = EventUnion<typeof kernelEvents>;
