/** A built-in tool's argument that cannot be used; each plugin names its own code. */
import { HologramError } from '../../../events/index.ts';

export abstract class InvalidToolArgument extends HologramError {
  constructor(
    readonly tool: string,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${tool}: ${problem}; call ${tool} again with a valid '${field}'`);
  }
}
