import { describe, expect, it } from 'vitest';
import { StreamAccumulationError, accumulateStream, createStreamAccumulator } from '../../adapters/llm/streamAccumulator.ts';
import { ARGUMENTS_DEPTH_AT_MOST, nestsDeeperThan } from '../../adapters/llm/jsonDepth.ts';

describe('stream accumulator', () => {
  it('given interleaved fragments of two indexed calls, then each call gets its own fragments in order', () => {
    expect(
      accumulateStream([
        { toolCalls: [{ index: 0, id: 'a', name: 'f', argumentsFragment: '{"x":' }] },
        { toolCalls: [{ index: 1, id: 'b', name: 'g', argumentsFragment: '{"y":' }] },
        {
          toolCalls: [
            { index: 0, argumentsFragment: '1}' },
            { index: 1, argumentsFragment: '[2]}' },
          ],
        },
        { finishReason: 'tool_calls', done: true },
      ]).toolCalls,
    ).toStrictEqual([
      { id: 'a', name: 'f', arguments: { x: 1 } },
      { id: 'b', name: 'g', arguments: { y: [2] } },
    ]);
  });

  it('given calls without index, then each starts a new call with a generated id', () => {
    expect(
      accumulateStream([
        { toolCalls: [{ name: 'f', argumentsFragment: '{}' }] },
        { toolCalls: [{ name: 'f', argumentsFragment: '{"a":1}' }] },
      ]).toolCalls,
    ).toStrictEqual([
      { id: 'call_0', name: 'f', arguments: {} },
      { id: 'call_1', name: 'f', arguments: { a: 1 } },
    ]);
  });

  it('given arguments that never became valid JSON, then a StreamAccumulationError with the tool name and text', () => {
    const acc = createStreamAccumulator();
    acc.push({ toolCalls: [{ index: 0, id: 'a', name: 'get_weather', argumentsFragment: '{"city": "Par' }] });
    expect(() => acc.finish()).toThrow(StreamAccumulationError);
    expect(() => acc.finish()).toThrow(/get_weather.*not a JSON object.*\{"city": "Par/);
  });

  it('given arguments that are JSON but not an object, then an error', () => {
    expect(() => accumulateStream([{ toolCalls: [{ index: 0, name: 'f', argumentsFragment: '[1]' }] }])).toThrow(StreamAccumulationError);
  });

  it('given arguments nested deeper than a tool could take, then an error, and just under it the call', () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deep = [{ toolCalls: [{ index: 0, name: 'memory_recall', argumentsFragment: `{"query":${nested(1500)}}` }] }];
    expect(() => accumulateStream(deep)).toThrow(`nested deeper than ${ARGUMENTS_DEPTH_AT_MOST} levels`);
    const fits = [{ toolCalls: [{ index: 0, name: 'f', argumentsFragment: nested(ARGUMENTS_DEPTH_AT_MOST) }] }];
    expect(accumulateStream(fits).toolCalls).toHaveLength(1);
    expect(nestsDeeperThan(JSON.parse(nested(ARGUMENTS_DEPTH_AT_MOST + 1)), ARGUMENTS_DEPTH_AT_MOST)).toBe(true);
    expect(nestsDeeperThan([[[1]]], 3)).toBe(false);
  });

  it('given usage in parts and no explicit finish reason, then usage is merged and the reason defaults', () => {
    const res = accumulateStream([{ usage: { inputTokens: 10 } }, { text: 'hi' }, { usage: { outputTokens: 3 } }]);
    expect(res).toStrictEqual({ text: 'hi', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 3 } });
  });

  it('given an error delta, then finishReason error and the message is kept', () => {
    const acc = createStreamAccumulator();
    acc.push({ text: 'par' });
    acc.push({ error: 'Overloaded', done: true });
    expect(acc.done).toBe(true);
    expect(acc.error).toBe('Overloaded');
    expect(acc.finish().finishReason).toBe('error');
  });
});
