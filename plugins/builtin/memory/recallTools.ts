/**
 * The reading tools: memory_recall (the one recall path, marking the graph entities it
 * returned as recalled this turn), memory_introspect, coldcontext_query (Peek, then Restore
 * before Remove for each doc: never delete-then-inject) and coldcontext_commit.
 */
import type { NewHologramEvent } from '../../../events/index.ts';
import { isOwnerOrInternal, recalledInTurn } from '../../../actors/index.ts';
import { InvalidMemoryArgument } from './errors.ts';
import { countArg, mediaBlocksArg, optionalTextArg, quoted, textArg } from './memoryArgs.ts';
import { coldDocContent, findRelation, memoryCounts } from './memoryQueries.ts';
import { guestScopeOf, type MemoryTool, type MemoryToolContext, scopeOf } from './memoryTool.ts';

const numbered = (lines: readonly { label: string; text: string }[]) =>
  lines.map((l, i) => `${i + 1}. [${l.label}] ${l.text.replace(/\n/g, '\n   ')}`).join('\n');

export const recallTools = (ctx: MemoryToolContext): MemoryTool[] => {
  const { memory, clock, ids } = ctx;
  const tx = memory.readModels;
  const turnOf = ctx.turnOf ?? ((call) => call.callId);

  const recall: MemoryTool = {
    spec: {
      name: 'memory_recall',
      description: 'Search memory (working context, cold context and the knowledge graph) for what relates to a query.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          k: { type: 'integer', minimum: 1, maximum: 50, description: 'Most results (default 5).' },
        },
        required: ['query'],
      },
    },
    async run(args, call) {
      const query = textArg('memory_recall', args, 'query');
      const guest = guestScopeOf(ctx, call, 'memory_recall');
      const hits = await memory.recall(
        query,
        countArg('memory_recall', args, 'k', 5),
        guest ?? scopeOf(ctx, call),
        undefined,
        guest !== undefined,
      );
      if (hits.length === 0) return `Nothing in memory matches '${quoted(query)}'.`;
      // The graph entities returned are marked recalled for this turn, so automatic recall does not inject them again.
      const turn = turnOf(call);
      const already = recalledInTurn(tx, turn);
      const named = new Set<string>();
      for (const hit of hits) {
        const relation = hit.tier === 'graph' && hit.id.startsWith('rel:') ? findRelation(tx, hit.id.slice(4)) : undefined;
        if (relation) for (const entity of [relation.subject, relation.object]) if (!already.has(entity)) named.add(entity);
      }
      const at = clock.now();
      await memory.record(
        [...named].map((entity): NewHologramEvent => ({ type: 'EntityRecalled', data: { entity, turn, at } })),
        at,
      );
      return numbered(hits.map((h) => ({ label: h.tier, text: h.text })));
    },
  };

  const introspect: MemoryTool = {
    spec: {
      name: 'memory_introspect',
      description: 'Show memory statistics: context events per scope, cold docs, graph entities and relations, blocks by tier.',
      parameters: { type: 'object', properties: {} },
    },
    async run(_args, call) {
      const c = memoryCounts(tx);
      // Which conversations there are, and how long, is the owner's to know; a guest sees its own.
      const current = scopeOf(ctx, call);
      const shown = isOwnerOrInternal(call.principal) ? c.contextByScope : c.contextByScope.filter((s) => s.scope === current);
      const context = shown.map((s) => `${s.scope} ${s.events}`).join(', ') || 'none';
      const blocks = c.blocksByTier.map((b) => `${b.tier} ${b.blocks}`).join(', ') || 'none';
      return [
        `context events by scope: ${context} (total ${shown.reduce((n, s) => n + s.events, 0)})`,
        `cold docs: ${c.coldDocs} (read ${c.coldAccesses} times)`,
        `graph: ${c.entities} entities, ${c.relations} relations`,
        `blocks by tier: ${blocks}`,
      ].join('\n');
    },
  };

  /** Phase 2 for one doc: its events back into L1 at their original times, then the doc leaves L2. */
  const restore = async (docId: string, at: number): Promise<void> => {
    if (coldDocContent(tx, docId)) await memory.restoreCold(docId, at);
  };

  const coldQuery: MemoryTool = {
    spec: {
      name: 'coldcontext_query',
      description: 'Recall from cold context: the matching docs are returned and moved back into the working context.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, k: { type: 'integer', minimum: 1, maximum: 50, description: 'Most docs (default 3).' } },
        required: ['query'],
      },
    },
    async run(args, call) {
      const tool = 'coldcontext_query';
      const query = textArg(tool, args, 'query');
      const k = countArg(tool, args, 'k', 3);
      // Another conversation's docs are not a guest's (or an injected instruction's) to read, nor to move back.
      const hits = await memory.peekCold(query, k, clock.now(), guestScopeOf(ctx, call, tool));
      if (hits.length === 0) return `Nothing in cold context matches '${quoted(query)}'.`;
      for (const hit of hits) await restore(hit.id.slice(4), clock.now());
      return `Restored ${hits.length} doc(s) to the working context:\n${numbered(hits.map((h) => ({ label: `cold ${h.scope}`, text: h.text })))}`;
    },
  };

  const coldCommit: MemoryTool = {
    spec: {
      name: 'coldcontext_commit',
      description: 'Write a note to cold context, where coldcontext_query and memory_recall find it.',
      parameters: {
        type: 'object',
        properties: {
          text: { type: 'string' },
          scope: { type: 'string', description: 'Conversation it belongs to (default: the current one; only the owner may name another).' },
          media_digests: {
            type: 'array',
            items: { type: 'string' },
            description: 'Hex content digests (≥ 12 characters) of media the text refers to.',
          },
        },
        required: ['text'],
      },
    },
    async run(args, call) {
      const tool = 'coldcontext_commit';
      const text = textArg(tool, args, 'text');
      const current = scopeOf(ctx, call);
      const scope = optionalTextArg(tool, args, 'scope') ?? current;
      if (!scope) throw new InvalidMemoryArgument(tool, 'scope', "there is no current conversation, so 'scope' is needed");
      // Another conversation's memory is not a guest's (or an injected instruction's) to write in.
      if (current && scope !== current && !isOwnerOrInternal(call.principal)) {
        throw new InvalidMemoryArgument(
          tool,
          'scope',
          `a note from ${call.principal ?? 'this input'} goes to its own conversation (${current}); leave out 'scope', ` +
            `or ask the owner to file it under '${quoted(scope)}'`,
        );
      }
      const blocks = mediaBlocksArg(tool, args);
      const docId = ids.next();
      const at = clock.now();
      await memory.record([{ type: 'ColdDocCommitted', data: { scope, docId, text, ...(blocks.length > 0 ? { blocks } : {}), at } }], at);
      return `Committed cold doc ${docId} to scope ${scope}.`;
    },
  };

  return [recall, introspect, coldQuery, coldCommit];
};
