/**
 * System prompt assembly by layer (spec: "Prompt layering"): persona, memory, knowledge,
 * timeline, then kernel runtime blocks generated from what the kernel actually does. Tool
 * usage never goes here; it travels in each tool's description. Pure.
 */

export const PROMPT_LAYERS = ['persona', 'memory', 'knowledge', 'timeline', 'runtime'] as const;
export type PromptLayer = (typeof PROMPT_LAYERS)[number];

export type PromptParts = Readonly<Partial<Record<PromptLayer, string>>>;

export type RuntimeFacts = Readonly<{
  /** Output channels registered now: their `output_send__{name}` tools are injected at run time. */
  outputChannels: readonly string[];
  /** Whether tool calls of one round run in parallel (a statement about kernel behaviour). */
  parallelToolCalls: boolean;
}>;

const HEADINGS: Record<PromptLayer, string> = {
  persona: '',
  memory: '## What you remember',
  knowledge: '## Knowledge',
  timeline: '## Timeline',
  runtime: '## How this kernel runs',
};

/** The kernel's runtime block: only statements about kernel behaviour and injected tool names. */
export const runtimeBlock = (facts: RuntimeFacts): string => {
  const lines: string[] = [];
  if (facts.outputChannels.length > 0) {
    lines.push(`Replies reach people through output channels: ${facts.outputChannels.map((c) => `output_send__${c}`).join(', ')}.`);
  }
  lines.push(
    facts.parallelToolCalls
      ? 'Several tool calls in one round run in parallel; their results come back in call order.'
      : 'Tool calls of one round run one after another.',
  );
  return lines.join('\n');
};

/** Joins the non-empty layers in their fixed order, each under its heading. */
export const assembleSystemPrompt = (parts: PromptParts): string =>
  PROMPT_LAYERS.flatMap((layer) => {
    const text = parts[layer]?.trim();
    if (!text) return [];
    return [HEADINGS[layer] ? `${HEADINGS[layer]}\n${text}` : text];
  }).join('\n\n');
