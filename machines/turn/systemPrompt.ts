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

/** Who the agent is when settings and the data dir say nothing else. */
export const DEFAULT_PERSONA =
  "You are Hologram, an assistant running on this person's own machine. Answer plainly and briefly, " +
  'say so when you do not know, and use the tools you are given when they help.';

/**
 * The timeline layer: the date, time and time zone the turn runs at (so "tomorrow at nine" can
 * be turned into a time). `timeZone` is an IANA name; an unknown one falls back to UTC.
 */
export const timelineBlock = (at: number, timeZone: string): string => {
  const zone = Intl.supportedValuesOf('timeZone').includes(timeZone) || timeZone === 'UTC' ? timeZone : 'UTC';
  const when = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(new Date(at));
  return `It is now ${when} (${zone}); as an ISO time: ${new Date(at).toISOString()}.`;
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
