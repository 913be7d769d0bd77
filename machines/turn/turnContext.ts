/**
 * What a turn sends the model, fitted to its budget (spec: "Context Budget"): the fixed part
 * (persona, runtime block, the input, the tool definitions) is counted first, recalled memory
 * gets at most a third of what is left, and the conversation the rest, newest first. The
 * conversation is cut only between exchanges (a user message and everything that answers
 * it, tool calls and results included), so what the model gets always starts with a user
 * message, and a tool call never comes without its result. Tokens are estimated at four
 * characters each, the same estimate the memory prunes by. Pure.
 */
import type { LlmToolDefinition, TurnMessage } from './turnTypes.ts';
import { computeTokenBudget, type TokenBudget } from './tokenBudget.ts';

/** Tokens a message costs beyond its text (role, separators), as chat templates add them. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

export const messageTokens = (message: TurnMessage): number =>
  MESSAGE_OVERHEAD_TOKENS +
  estimateTokens(message.content) +
  (message.toolCalls?.length ? estimateTokens(JSON.stringify(message.toolCalls)) : 0);

export const toolDefinitionTokens = (tools: readonly LlmToolDefinition[]): number =>
  tools.length === 0 ? 0 : estimateTokens(JSON.stringify(tools));

export type TurnContextInput = Readonly<{
  /** The model's declared context window; undefined uses the fallback (see computeTokenBudget). */
  contextWindow: number | undefined;
  /** The fixed layers of the system prompt (persona, timeline, runtime), as they will be sent. */
  fixedPrompt: string;
  input: string;
  tools: readonly LlmToolDefinition[];
  /** The conversation so far, oldest first. */
  history: readonly TurnMessage[];
  /** Recalled lines, best first, for the memory and knowledge layers. */
  related: Readonly<{ memory: readonly string[]; knowledge: readonly string[] }>;
}>;

export type TurnContextPlan = Readonly<{
  budget: TokenBudget;
  history: TurnMessage[];
  memory: string[];
  knowledge: string[];
  /** Messages of the conversation left out (older exchanges, or a reply without its question). */
  droppedMessages: number;
  /** Why the input cannot be sent at all: with the prompt's fixed part it is more than the model's whole window. */
  inputTooLong?: string;
}>;

/**
 * The conversation as a model accepts it: every tool call answered by its result right after
 * it, and no result without its call. Memory can sink one half of a pair (a long result is
 * the least relevant thing in context): then the other half goes too, and an assistant
 * message that only asked for tools is left out.
 */
export const wellFormedHistory = (history: readonly TurnMessage[]): TurnMessage[] => {
  const kept: TurnMessage[] = [];
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!;
    if (message.role === 'tool') continue; // a result whose call is not right before it
    if (message.role !== 'assistant' || !message.toolCalls?.length) {
      kept.push(message);
      continue;
    }
    let end = i + 1;
    while (end < history.length && history[end]!.role === 'tool') end++;
    const results = history.slice(i + 1, end);
    const ids = new Set(message.toolCalls.map((c) => c.id));
    const answered = new Set(results.map((r) => r.toolCallId));
    if (results.length === ids.size && [...ids].every((id) => answered.has(id))) kept.push(message, ...results);
    else if (message.content.trim()) kept.push({ role: 'assistant', content: message.content });
    i = end - 1;
  }
  return kept;
};

/** The exchanges of a conversation: each starts at a user message; what comes before the first user message belongs to none. */
const exchangesOf = (history: readonly TurnMessage[]): TurnMessage[][] => {
  const exchanges: TurnMessage[][] = [];
  for (const message of history) {
    if (message.role === 'user') exchanges.push([message]);
    else exchanges.at(-1)?.push(message);
  }
  return exchanges;
};

/** Lines in order while they fit `tokens`; a line is one recalled item, never cut. */
const linesWithin = (lines: readonly string[], tokens: { left: number }): string[] => {
  const kept: string[] = [];
  for (const line of lines) {
    const cost = estimateTokens(line) + 1;
    if (cost > tokens.left) break;
    tokens.left -= cost;
    kept.push(line);
  }
  return kept;
};

export const planTurnContext = (input: TurnContextInput): TurnContextPlan => {
  const fixed =
    estimateTokens(input.fixedPrompt) + messageTokens({ role: 'user', content: input.input }) + toolDefinitionTokens(input.tools);
  const budget = computeTokenBudget(input.contextWindow, fixed + MESSAGE_OVERHEAD_TOKENS);
  const recall = { left: budget.memoryRecall };
  const memory = linesWithin(input.related.memory, recall);
  const knowledge = linesWithin(input.related.knowledge, recall);

  const exchanges = exchangesOf(wellFormedHistory(input.history));
  let left = budget.contextEvents;
  let from = exchanges.length;
  while (from > 0) {
    const cost = exchanges[from - 1]!.reduce((n, m) => n + messageTokens(m), 0);
    if (cost > left) break;
    left -= cost;
    from--;
  }
  const history = exchanges.slice(from).flat();
  const plan = { budget, history, memory, knowledge, droppedMessages: input.history.length - history.length };
  if (budget.fixed <= budget.window) return plan;
  const inputTokens = estimateTokens(input.input);
  const inputTooLong =
    `the message is about ${inputTokens.toLocaleString('en')} tokens, and with the instructions it comes with it is more than the ` +
    `${budget.window.toLocaleString('en')} the model reads at most (its context window): send a shorter message, or split it`;
  return { ...plan, inputTooLong };
};
