/**
 * A turn's context fits its budget: the fixed part, the recalled memory (at most a third of
 * what the fixed part leaves) and the conversation (the rest, whole exchanges, newest first,
 * starting with a user message) never pass 0.8 of the model's window.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeTokenBudget,
  estimateTokens,
  messageTokens,
  planTurnContext,
  toolDefinitionTokens,
  type TurnMessage,
  wellFormedHistory,
} from '../../machines/turn/index.ts';

const RUNS = Number(process.env.FC_RUNS ?? 300);

// size 'max': fast-check's default size stops strings and arrays at about ten elements, so no
// conversation or recalled memory ever passed the budget and nothing was ever left out. A message
// is up to 2,000 characters said up to five times: 40 of them can pass a 100k-token band.
const message = fc.record({
  role: fc.constantFrom<TurnMessage['role']>('user', 'assistant', 'system'),
  content: fc.string({ maxLength: 2_000, size: 'max' }).map((s) => s.repeat(1 + (s.length % 5))),
});

const longConversation = (count: number, chars: number): TurnMessage[] =>
  Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}: ${'words '.repeat(chars / 6)}` }));

const sent = (plan: ReturnType<typeof planTurnContext>, fixedPrompt: string, input: string, tools: number): number =>
  estimateTokens(fixedPrompt) +
  messageTokens({ role: 'user', content: input }) +
  tools +
  plan.history.reduce((n, m) => n + messageTokens(m), 0) +
  [...plan.memory, ...plan.knowledge].reduce((n, l) => n + estimateTokens(l) + 1, 0);

describe('planTurnContext', () => {
  it('an 8,192-token model and 30 long messages: the request stays in the band, memory in its third, history starts with a user', () => {
    const history = longConversation(30, 2_000);
    const related = { memory: Array.from({ length: 8 }, (_, i) => `- remembered ${i} ${'x'.repeat(1_500)}`), knowledge: [] };
    const plan = planTurnContext({ contextWindow: 8_192, fixedPrompt: 'You are terse.', input: 'and now?', tools: [], history, related });
    expect(plan.budget.target).toBe(6_553);
    expect(sent(plan, 'You are terse.', 'and now?', 0)).toBeLessThanOrEqual(6_553);
    expect(plan.memory.reduce((n, l) => n + estimateTokens(l) + 1, 0)).toBeLessThanOrEqual(plan.budget.memoryRecall);
    expect(plan.memory.length).toBeGreaterThan(0);
    expect(plan.history[0]!.role).toBe('user');
    expect(plan.history.length).toBeGreaterThan(0);
    expect(plan.history).toEqual(history.slice(history.length - plan.history.length)); // the newest, in order
  });

  it('never passes the band, keeps whole exchanges from the newest back, and starts with a user message', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 1_000, max: 200_000 }), { nil: undefined }),
        fc.array(message, { maxLength: 40, size: 'max' }),
        fc.array(fc.string({ maxLength: 3_000, size: 'max' }), { maxLength: 10, size: 'max' }),
        fc.string({ maxLength: 2_000, size: 'max' }),
        fc.integer({ min: 0, max: 20 }),
        (window, history, recalled, persona, toolCount) => {
          const tools = Array.from({ length: toolCount }, (_, i) => ({ name: `tool_${i}`, description: 'does a thing', parameters: {} }));
          const related = { memory: recalled, knowledge: recalled.slice(0, 2) };
          const plan = planTurnContext({ contextWindow: window, fixedPrompt: persona, input: 'hi', tools, history, related });
          const budget = computeTokenBudget(window, 0);
          const fixed = estimateTokens(persona) + messageTokens({ role: 'user', content: 'hi' }) + toolDefinitionTokens(tools);
          if (fixed < plan.budget.target) expect(sent(plan, persona, 'hi', toolDefinitionTokens(tools))).toBeLessThanOrEqual(budget.target);
          expect([...plan.memory, ...plan.knowledge].reduce((n, l) => n + estimateTokens(l) + 1, 0)).toBeLessThanOrEqual(
            plan.budget.memoryRecall,
          );
          if (plan.history.length > 0) expect(plan.history[0]!.role).toBe('user');
          expect(plan.history).toEqual(history.slice(history.length - plan.history.length));
          expect(plan.droppedMessages).toBe(history.length - plan.history.length);
        },
      ),
      // Long strings shrink for many minutes: a failure is reported, shrunk as far as it got, after 20 s
      // (failOnInterrupt: a run cut short with no failure found fails too, rather than pass on fewer runs).
      { numRuns: RUNS, plugins: [fc.interruptAfterTimeLimit(20_000, { failOnInterrupt: true })] },
    );
  });

  // A 1 MiB message went whole to an 8,192-token model (found by the hostile tester).
  it('says the input cannot be sent exactly when, with the fixed part, it is more than the whole window', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 100, max: 50_000 }), { nil: undefined }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.string({ maxLength: 2_000 }),
        (window, inputChars, persona) => {
          const input = 'x'.repeat(inputChars);
          const related = { memory: [], knowledge: [] };
          const plan = planTurnContext({ contextWindow: window, fixedPrompt: persona, input, tools: [], history: [], related });
          expect(plan.inputTooLong !== undefined).toBe(plan.budget.fixed > plan.budget.window);
          if (plan.inputTooLong === undefined) return;
          expect(plan.inputTooLong).toContain(`about ${estimateTokens(input).toLocaleString('en')} tokens`);
          expect(plan.inputTooLong).toContain(`the ${plan.budget.window.toLocaleString('en')} the model reads at most`);
        },
      ),
      { numRuns: RUNS },
    );
    const huge = planTurnContext({
      contextWindow: 8_192,
      fixedPrompt: 'persona',
      input: 'r'.repeat(1_048_000),
      tools: [],
      history: [],
      related: { memory: [], knowledge: [] },
    });
    expect(huge.inputTooLong).toMatch(/^the message is about 262,000 tokens, .* more than the 8,192 the model reads at most/);
  });
});

/** Every call answered right after it, every result right after its call. */
const expectWellFormed = (history: readonly TurnMessage[]): void => {
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role === 'tool') throw new Error(`a result without its call at ${i}`);
    if (m.role !== 'assistant' || !m.toolCalls?.length) continue;
    const results = history.slice(i + 1, i + 1 + m.toolCalls.length);
    expect(results.map((r) => r.role)).toEqual(m.toolCalls.map(() => 'tool'));
    expect(new Set(results.map((r) => r.toolCallId))).toEqual(new Set(m.toolCalls.map((c) => c.id)));
    i += m.toolCalls.length;
  }
};

/** A conversation with tool rounds, some of them with a half sunk (a call or a result missing). */
const toolConversation = fc
  .array(
    fc.record({
      user: fc.string({ maxLength: 50 }),
      calls: fc.uniqueArray(fc.constantFrom('c1', 'c2', 'c3', 'c4'), { maxLength: 3 }),
      answer: fc.string({ maxLength: 50 }),
      lose: fc.constantFrom('nothing', 'call', 'a result', 'the answer'),
    }),
    { maxLength: 8 },
  )
  .map((exchanges) =>
    exchanges.flatMap(({ user, calls, answer, lose }, n): TurnMessage[] => {
      const ids = calls.map((c) => `${n}-${c}`);
      const call: TurnMessage[] = ids.length
        ? [{ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'files_read', arguments: {} })) }]
        : [];
      const results: TurnMessage[] = ids.map((id) => ({ role: 'tool', content: `result ${id}`, toolCallId: id }));
      return [
        { role: 'user', content: user },
        ...(lose === 'call' ? [] : call),
        ...(lose === 'a result' ? results.slice(1) : results),
        ...(lose === 'the answer' ? [] : [{ role: 'assistant' as const, content: answer }]),
      ];
    }),
  );

describe('wellFormedHistory (property)', () => {
  it('leaves no call without its result and no result without its call; a whole conversation stays as it is', () => {
    fc.assert(
      fc.property(toolConversation, (history) => {
        const kept = wellFormedHistory(history);
        expectWellFormed(kept);
        expect(kept.filter((m) => m.role === 'user')).toEqual(history.filter((m) => m.role === 'user'));
        expect(wellFormedHistory(kept)).toEqual(kept);
        const plan = planTurnContext({
          contextWindow: 8_192,
          fixedPrompt: '',
          input: 'hi',
          tools: [],
          history,
          related: { memory: [], knowledge: [] },
        });
        expectWellFormed(plan.history);
      }),
      { numRuns: RUNS },
    );
  });
});
