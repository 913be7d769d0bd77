/** Every event type this build declares, one union per subsystem. */
import type { NewEventOf, RecordedEventOf } from '../envelope.ts';
import { EventCatalog } from '../eventCatalog.ts';
import { journalEvents, type JournalEvent } from './journalEvents.ts';
import { kernelEvents, type KernelEvent } from './kernelEvents.ts';
import { llmEvents, type LlmEvent } from './llmEvents.ts';
import { memoryEvents, type MemoryEvent } from './memoryEvents.ts';
import { pluginEvents, type PluginEvent } from './pluginEvents.ts';
import { schedulerEvents, type SchedulerEvent } from './schedulerEvents.ts';
import { turnEvents, type TurnEvent } from './turnEvents.ts';

export { kernelEvents, KERNEL_STREAM, type KernelEvent } from './kernelEvents.ts';
export { journalEvents, type JournalEvent } from './journalEvents.ts';
export { llmEvents, LLM_SOURCES_STREAM, type LlmEvent } from './llmEvents.ts';
export { schedulerEvents, SCHEDULER_STREAM, type SchedulerEvent } from './schedulerEvents.ts';
export {
  memoryEvents,
  MEMORY_STREAM,
  type MemoryEvent,
  type BlockRef,
  type ContextEventData,
  type TripleData,
  type SceneFeatures,
  type Situation,
} from './memoryEvents.ts';
export {
  pluginEvents,
  pluginSupervisorStream,
  PLUGIN_EVENT_TYPES,
  PLUGIN_REGISTRY_STREAM,
  PLUGIN_SUPERVISOR_STREAM_PREFIX,
  type PluginEvent,
} from './pluginEvents.ts';
export { turnEvents, TURN_STREAM_PREFIX, TOOLSET_STREAM, TURN_INPUT_TYPES, type TurnEvent } from './turnEvents.ts';
export * from './turnParts.ts';

export type HologramEvent = KernelEvent | JournalEvent | SchedulerEvent | TurnEvent | PluginEvent | MemoryEvent | LlmEvent;

/** The name of an event type this build declares. */
export type HologramEventType = HologramEvent['type'];

/** A declared event by its type name. */
export type EventNamed<T extends HologramEventType> = Extract<HologramEvent, { type: T }>;

/** A recorded event of the given type(s), as the log returns it. */
export type Recorded<T extends HologramEventType = HologramEventType> = RecordedEventOf<EventNamed<T>>;

/** A declared event as a caller appends it. */
export type NewHologramEvent = NewEventOf<HologramEvent>;

/** The catalog of every declared event type; a fresh copy so callers may extend it in tests. */
export const createDefaultCatalog = (): EventCatalog =>
  new EventCatalog([
    ...Object.values(kernelEvents),
    ...Object.values(journalEvents),
    ...Object.values(schedulerEvents),
    ...Object.values(turnEvents),
    ...Object.values(pluginEvents),
    ...Object.values(memoryEvents),
    ...Object.values(llmEvents),
  ]);
