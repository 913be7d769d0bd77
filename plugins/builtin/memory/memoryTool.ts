/** What every memory tool is made of: its spec, and a body that decides events and appends them through the memory. */
import type { Memory } from '../../../actors/index.ts';
import type { Clock, IdSource } from '../../../events/index.ts';
import type { Args } from './memoryArgs.ts';
import type { ToolCallInfo, ToolSpec } from '../../sdk/pluginApi.ts';

export type MemoryToolsOptions = Readonly<{
  /** The scope (conversation) of the current turn: recall prefers it, coldcontext_commit defaults to it. */
  scopeOf?: () => string;
  /** The turn a call belongs to, the key of EntityRecalled; default: the call's id. */
  turnOf?: (call: ToolCallInfo) => string;
  clock: Clock;
  /** Relation and cold doc ids. */
  ids: IdSource;
}>;

export type MemoryToolContext = MemoryToolsOptions & Readonly<{ memory: Memory }>;

/** A tool body returns the text for the model, or throws a HologramError that becomes an isError reply. */
export type MemoryTool = Readonly<{ spec: ToolSpec; run: (args: Args, call: ToolCallInfo) => Promise<string> }>;
