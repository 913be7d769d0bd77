/** A kernel module: a node of the assembly graph with its start and stop. */
import type { ModuleDeclaration } from '../../machines/kernel/index.ts';
import type { FacilityTypes } from './facilities.ts';

export interface ModuleContext {
  /** A facility this module declared in `requires`, as what it is. */
  require<K extends keyof FacilityTypes>(facility: K): FacilityTypes[K];
  /** A facility given before assembly that may be absent (e.g. the inspector). */
  optional<K extends keyof FacilityTypes>(facility: K): FacilityTypes[K] | undefined;
  /** Publishes a facility this module declared in `provides`. */
  provide<K extends keyof FacilityTypes>(facility: K, value: FacilityTypes[K]): void;
  /** Wraps a facility this module declared in `guards`: its provider's value reaches every reader through `wrap`. */
  guard<K extends keyof FacilityTypes>(facility: K, wrap: (value: FacilityTypes[K]) => FacilityTypes[K]): void;
  /** A line for the daemon's console. */
  log(line: string): void;
  /** Reports that the running module broke; the kernel then stops in order. */
  fail(error: unknown): void;
  /**
   * Aborted when the kernel stops this module before its init has finished (a Ctrl-C at start): a
   * long init (the recall index rebuilt) may end early by throwing `signal.reason`.
   */
  readonly stopping: AbortSignal;
}

export interface KernelModule extends ModuleDeclaration {
  readonly requires: readonly (keyof FacilityTypes)[];
  readonly provides: readonly (keyof FacilityTypes)[];
  readonly guards?: readonly (keyof FacilityTypes)[];
  init(context: ModuleContext): void | Promise<void>;
  stop?(): void | Promise<void>;
}
