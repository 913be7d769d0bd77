/** Why a module graph cannot be assembled. Every message lists every declared facility. */
import { HologramError } from '../../events/index.ts';
import type { ModuleDeclaration } from './moduleDeclaration.ts';

export type AssemblyProblem = 'MISSING_FACILITY' | 'DUPLICATE_FACILITY' | 'FACILITY_CYCLE' | 'DUPLICATE_MODULE';

export const declaredFacilities = (modules: readonly ModuleDeclaration[], given: readonly string[]): string =>
  [...given.map((f) => `${f} (given before assembly)`), ...modules.flatMap((m) => m.provides.map((f) => `${f} (by ${m.name})`))]
    .sort()
    .join(', ') || '(none)';

export class KernelAssemblyError extends HologramError {
  constructor(
    readonly code: AssemblyProblem,
    readonly detail: string,
    modules: readonly ModuleDeclaration[],
    given: readonly string[],
  ) {
    super(`cannot assemble the kernel: ${detail}. Declared facilities: ${declaredFacilities(modules, given)}`);
  }
}
