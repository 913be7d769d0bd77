/**
 * What a turn recalls reaches the model scrubbed before it is shortened: shortened first, a value
 * recorded before it became a secret reached the model but for its last characters (red team round 11).
 */
import { describe, expect, it } from 'vitest';
import type { Memory } from '../../actors/memory/openMemory.ts';
import { turnMemoryOf } from '../../actors/memory/turnMemory.ts';

describe("a turn's recalled memory", () => {
  it('is scrubbed before its whitespace is folded and it is cut at 400 characters', async () => {
    const value = 'Qm8vT3kZ7pW2xR9nL4cY6h';
    const text = `zebra ${'x'.repeat(371)}\n${value} zebra`;
    const memory = { recall: async () => [{ tier: 'cold', text }] } as unknown as Memory;
    const related = await turnMemoryOf(memory, (t) => t.replaceAll(value, '@{KEY}')).related('zebra', 'cli:me', undefined, false);
    expect(related.memory).toEqual([`- zebra ${'x'.repeat(371)} @{KEY} zebra`.slice(0, 402)]);
    expect(related.memory.join('')).not.toContain(value.slice(0, 4));
  });
});
