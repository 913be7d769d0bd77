/** What every memory tool is made of: its spec, and a body that decides events and appends them through the memory. */
import { isOwnerOrInternal, type Memory } from '../../../actors/index.ts';
import type { Clock, IdSource } from '../../../events/index.ts';
import { InvalidMemoryArgument } from './errors.ts';
import type { Args } from './memoryArgs.ts';
import type { ToolCallInfo, ToolSpec } from '../../sdk/pluginApi.ts';

export type MemoryToolsOptions = Readonly<{
  /** The scope (conversation) a call acts on: recall prefers it, coldcontext_commit defaults to it. Default: the call's own turn's. */
  scopeOf?: (call: ToolCallInfo) => string | undefined;
  /** Whether the tools that rewrite or delete the graph (merge, purge, edit, delete_entity) are offered. */
  adminTools?: boolean;
  /** The turn a call belongs to, the key of EntityRecalled; default: the call's id. */
  turnOf?: (call: ToolCallInfo) => string;
  clock: Clock;
  /** Relation and cold doc ids. */
  ids: IdSource;
}>;

export type MemoryToolContext = MemoryToolsOptions & Readonly<{ memory: Memory }>;

/** The conversation a call acts on: the options' choice, else the turn's own. */
export const scopeOf = (ctx: MemoryToolsOptions, call: ToolCallInfo): string | undefined =>
  ctx.scopeOf ? ctx.scopeOf(call) : call.conversation;

/**
 * The conversation a guest's read is held to: its own (a guest reads no other conversation, nor
 * the graph every conversation feeds); undefined for the owner and the kernel, who read them all.
 * @throws InvalidMemoryArgument when a guest's call names no conversation
 */
export const guestScopeOf = (ctx: MemoryToolsOptions, call: ToolCallInfo, tool: string): string | undefined => {
  if (isOwnerOrInternal(call.principal)) return undefined;
  const scope = scopeOf(ctx, call);
  if (scope === undefined) {
    throw new InvalidMemoryArgument(tool, 'query', `a query from ${call.principal} reads its own conversation, and this call has none`);
  }
  return scope;
};

/** A tool body returns the text for the model, or throws a HologramError that becomes an isError reply. */
export type MemoryTool = Readonly<{ spec: ToolSpec; run: (args: Args, call: ToolCallInfo) => Promise<string> }>;
