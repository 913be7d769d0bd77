/** A kernel module: a node of the assembly graph with its start and stop. */
import type { ModuleDeclaration } from '../../machines/kernel/index.ts';

export interface ModuleContext {
  /** A facility this module declared in `requires`. */
  require<T>(facility: string): T;
  /** A facility given before assembly that may be absent (e.g. the inspector). */
  optional<T>(facility: string): T | undefined;
  /** Publishes a facility this module declared in `provides`. */
  provide(facility: string, value: unknown): void;
  /** A line for the daemon's console. */
  log(line: string): void;
  /** Reports that the running module broke; the kernel then stops in order. */
  fail(error: unknown): void;
}

export interface KernelModule extends ModuleDeclaration {
  init(context: ModuleContext): void | Promise<void>;
  stop?(): void | Promise<void>;
}
