/** Every event type this build declares, one union per subsystem. */
import { EventCatalog } from '../eventCatalog.ts';
import { kernelEvents, type KernelEvent } from './kernelEvents.ts';

export { kernelEvents, KERNEL_STREAM, type KernelEvent } from './kernelEvents.ts';

export type HologramEvent = KernelEvent;

/** The catalog of every declared event type; a fresh copy so callers may extend it in tests. */
export const createDefaultCatalog = (): EventCatalog => new EventCatalog(Object.values(kernelEvents));
