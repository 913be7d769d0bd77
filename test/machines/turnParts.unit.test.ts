import { describe, expect, it } from 'vitest';
import { assembleSystemPrompt, computeTokenBudget, FALLBACK_CONTEXT_WINDOW, runtimeBlock } from '../../machines/turn/index.ts';

describe('token budget', () => {
  it('works in a band of 80 % of the window, a third of the free part for memory, two thirds for context', () => {
    expect(computeTokenBudget(128_000, 2_400)).toEqual({
      window: 128_000,
      windowAssumed: false,
      target: 102_400,
      fixed: 2_400,
      memoryRecall: 33_333,
      contextEvents: 66_667,
    });
  });

  it('caps the band at 600 000 tokens however large the window', () => {
    expect(computeTokenBudget(1_000_000, 0).target).toBe(600_000);
  });

  it('falls back to a conservative window, and says so, when the model declares none', () => {
    const budget = computeTokenBudget(undefined, 100);
    expect(budget).toMatchObject({ window: FALLBACK_CONTEXT_WINDOW, windowAssumed: true });
    expect(computeTokenBudget(0, 0).windowAssumed).toBe(true);
  });

  it('never hands out negative budgets when the fixed part exceeds the band', () => {
    expect(computeTokenBudget(1_000, 5_000)).toMatchObject({ memoryRecall: 0, contextEvents: 0 });
  });
});

describe('system prompt', () => {
  it('puts the layers in a fixed order and leaves empty ones out', () => {
    const prompt = assembleSystemPrompt({ runtime: 'R', persona: 'I am Holo.', timeline: '', memory: 'likes tea' });
    expect(prompt).toBe('I am Holo.\n\n## What you remember\nlikes tea\n\n## How this kernel runs\nR');
  });

  it('the runtime block speaks of kernel behaviour and injected channel tools only', () => {
    const block = runtimeBlock({ outputChannels: ['qq', 'cli'], parallelToolCalls: true });
    expect(block).toContain('output_send__qq, output_send__cli');
    expect(block).toContain('run in parallel');
    expect(runtimeBlock({ outputChannels: [], parallelToolCalls: false })).not.toContain('output_send__');
  });
});
