/**
 * The memory as a turn sees it: the scope's L1 context as the conversation so far, a
 * read-only "[Related memory]" block recalled from the colder tiers for the system prompt,
 * and the way inputs and replies enter L1.
 */
import { contextOf, rowEvent } from '../../projections/index.ts';
import type { TurnMessage } from '../../machines/turn/index.ts';
import type { Memory } from './openMemory.ts';
import type { Situation } from '../../events/index.ts';

export type TurnMemory = Readonly<{
  /** Records an utterance of the conversation (the input before the turn, the reply after). */
  observe(
    scope: string,
    role: 'user' | 'agent',
    text: string,
    at: number,
    where?: Readonly<{ channel?: string; peer?: string }>,
  ): Promise<string>;
  /** Records a turn's tool round: the model's calls, then each result, in the order the model saw them. */
  observeTools(scope: string, messages: readonly TurnMessage[], at: number): Promise<void>;
  /** The conversation in L1, oldest first, without the event `exceptEventId` (the input itself). */
  history(scope: string, exceptEventId?: string): TurnMessage[];
  /** What the colder tiers hold about `query`, best first: cold docs as `memory`, graph sentences as `knowledge` (read-only prompt layers). */
  /** What memory holds that relates to `query` in `scope`, and the graph's knowledge unless `ownOnly` (a guest's turn). */
  related(
    query: string,
    scope: string,
    situation?: Situation,
    ownOnly?: boolean,
  ): Promise<Readonly<{ memory: string[]; knowledge: string[] }>>;
}>;

export const RELATED_MEMORY_ITEMS = 5;

/**
 * `scrub`: a text with the vault's values as their aliases, applied to what is recalled before it
 * is shortened (shortened first, a value recorded before it became a secret reached the model but
 * for its last characters, which no scrub knows for one).
 */
export const turnMemoryOf = (memory: Memory, scrub: (text: string) => string = (text) => text): TurnMemory => ({
  observe: async (scope, role, text, at, where) => {
    // An input comes with its situation: the scene it joins (or starts) is decided with it.
    const { eventId } = await memory.observe(scope, { role, text, at }, role === 'user' ? { ...where } : undefined);
    return eventId;
  },
  observeTools: async (scope, messages, at) => {
    for (const m of messages) {
      if (m.role === 'assistant') await memory.observe(scope, { role: 'agent', text: m.content, at, toolCalls: m.toolCalls ?? [] });
      else if (m.role === 'tool')
        await memory.observe(scope, { role: 'tool', text: m.content, at, ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}) });
    }
  },
  history: (scope, exceptEventId) =>
    contextOf(memory.readModels, scope)
      .filter((row) => row.event_id !== exceptEventId)
      .map(rowEvent)
      .map((e): TurnMessage => {
        if (e.role === 'agent')
          return e.toolCalls?.length
            ? { role: 'assistant', content: e.text, toolCalls: e.toolCalls }
            : { role: 'assistant', content: e.text };
        if (e.role === 'tool') return { role: 'tool', content: e.text, ...(e.toolCallId ? { toolCallId: e.toolCallId } : {}) };
        return { role: e.role === 'user' ? 'user' : 'system', content: e.text };
      }),
  related: async (query, scope, situation, ownOnly) => {
    const hits = await memory.recall(query, RELATED_MEMORY_ITEMS, scope, situation, ownOnly);
    const lines = (tier: 'cold' | 'graph') =>
      hits.filter((h) => h.tier === tier).map((h) => `- ${scrub(h.text).replace(/\s+/g, ' ').slice(0, 400)}`);
    return { memory: lines('cold'), knowledge: lines('graph') };
  },
});
