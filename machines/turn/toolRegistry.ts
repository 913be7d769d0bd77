/**
 * The tool registry: tools from plugins, built-ins and memory under one namespace. A name is
 * registered once; each tool knows its owner plugin, and a plugin's tools leave together.
 * Pure (a value type; registrations arrive as events and are folded here).
 */
import { HologramError, type RegisteredTool } from '../../events/index.ts';

export type { RegisteredTool };
export type ToolOrigin = RegisteredTool['origin'];

export class DuplicateTool extends HologramError {
  readonly code = 'DUPLICATE_TOOL';
  constructor(name: string, owner: string, claimant: string) {
    super(`tool '${name}' is already registered by '${owner}'; '${claimant}' must choose another name (prefix it with its plugin name)`);
  }
}

export class ToolRegistry {
  private constructor(private readonly tools: ReadonlyMap<string, RegisteredTool>) {}

  static empty(): ToolRegistry {
    return new ToolRegistry(new Map());
  }

  register(tool: RegisteredTool): ToolRegistry {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
      throw new RangeError(`tool name '${tool.name}' must be 1–64 letters, digits, '_' or '-' (what every provider accepts)`);
    }
    const existing = this.tools.get(tool.name);
    if (existing) throw new DuplicateTool(tool.name, existing.owner, tool.owner);
    return new ToolRegistry(new Map([...this.tools, [tool.name, tool]]));
  }

  /** Removes every tool of a plugin (it crashed, was disabled or reloads). */
  withoutOwner(owner: string): ToolRegistry {
    return new ToolRegistry(new Map([...this.tools].filter(([, tool]) => tool.owner !== owner)));
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  ownerOf(name: string): string | undefined {
    return this.tools.get(name)?.owner;
  }

  /** Every tool, sorted by name: the same list for the same registrations, whatever their order. */
  list(): RegisteredTool[] {
    return [...this.tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
