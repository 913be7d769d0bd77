/** The kernel's vocabulary: the messages it takes, the facts it records, and where it stands. */
import type { KernelEvent } from '../../events/index.ts';
import type { ModuleDeclaration } from './moduleDeclaration.ts';
import type { ModuleLayers } from './planLayers.ts';

/** The daemon booted: what the modules declared, the facilities given before them, the layers planned. */
export type BootMessage = Readonly<{
  type: 'boot';
  at: number;
  pid: number;
  dataDir: string;
  given: readonly string[];
  modules: readonly ModuleDeclaration[];
  layers: ModuleLayers;
}>;

/** What a module's init and stop report back to the kernel. */
export type ModuleReport =
  | Readonly<{ type: 'module.ready'; module: string; provided: readonly string[] }>
  | Readonly<{ type: 'module.failed'; module: string; error: string; code?: string }>
  | Readonly<{ type: 'module.stopped'; module: string; error?: string }>;

/** Messages the kernel takes. Each carries the time it happened. */
export type KernelMessage =
  | BootMessage
  | (ModuleReport & Readonly<{ at: number }>)
  | Readonly<{ type: 'stop'; at: number; reason: string }>;

/** Facts the kernel records: its lifecycle and the effects it asks for (declared in the event catalog). */
export type KernelFact = KernelEvent;

export type KernelPhase = 'waiting' | 'starting' | 'running' | 'stopping' | 'stopped';

export type ModuleFailure = Readonly<{ module: string; error: string }>;

export type KernelState = Readonly<{
  /** What the boot declared (empty before it). */
  modules: readonly ModuleDeclaration[];
  given: readonly string[];
  /** The layers of KernelStarted; null before it. */
  layers: ModuleLayers | null;
  /** The last layer whose start was requested (-1 before the first). */
  layer: number;
  /** Modules whose init was requested, in order: the reverse is the stop order. */
  started: readonly string[];
  ready: readonly string[];
  failed: readonly string[];
  /** Facilities ready for the next layer: the given ones and what started modules provided. */
  provided: readonly string[];
  stopRequested: readonly string[];
  stopped: readonly string[];
  /** The first failure: it is why the kernel stops. */
  failure: ModuleFailure | null;
  /** The reason of the stop message, when the kernel stops because it was asked to. */
  stopReason: string | null;
  /** KernelStopped is recorded. */
  finished: boolean;
}>;

export type KernelOutput = Readonly<{ failure: ModuleFailure | null; reason: string }>;
