/** A plugin tool's answer as the turn receives it: whole when it is small, cut at the bound when it is not, saying so, never inside a character. */
import { describe, expect, it } from 'vitest';
import type { PluginHub } from '../../plugins/host/pluginHub.ts';
import { TOOL_RESULT_AT_MOST, turnPluginsOf } from '../../plugins/host/turnPlugins.ts';

const answering = (reply: unknown) =>
  turnPluginsOf({ callTool: async () => reply, registry: { tools: new Map() } } as unknown as PluginHub);

const call = { callId: 'c1', name: 'big_answer', owner: 'big', args: {} };
const signal = new AbortController().signal;

describe('plugin tool results', () => {
  it('passes a small answer as it is, a string or a reply object', async () => {
    expect(await answering('fine').callTool(call, signal)).toEqual({ content: 'fine' });
    expect(await answering({ content: 'bad', isError: true }).callTool(call, signal)).toEqual({ content: 'bad', isError: true });
    expect(await answering(undefined).callTool(call, signal)).toEqual({ content: '' });
  });

  // A hostile tester's tool answered { text: '…' }: the model got an empty result and nobody a word.
  it("says an answer that is neither a string nor { content: string } is the tool's mistake", async () => {
    for (const [reply, got] of [
      [{ text: 'hi' }, 'an object without a string content'],
      [{ content: 42 }, 'an object without a string content'],
      [['hi'], 'a list'],
      [7, 'a number'],
    ] as const) {
      expect(await answering(reply).callTool(call, signal)).toEqual({
        content: `tool 'big_answer' answered ${got}; a tool answers a string or { content: string, isError?: boolean }`,
        isError: true,
      });
    }
  });

  it('cuts an answer over the bound there, saying how long it was, and never between the halves of a character', async () => {
    const big = 'B'.repeat(TOOL_RESULT_AT_MOST * 4);
    const { content } = await answering(big).callTool(call, signal);
    expect(content.startsWith('B'.repeat(TOOL_RESULT_AT_MOST))).toBe(true);
    expect(content).toContain(`(cut: the tool answered ${big.length} characters`);
    expect(content.length).toBeLessThan(TOOL_RESULT_AT_MOST + 200);
    const emoji = `${'a'.repeat(TOOL_RESULT_AT_MOST - 1)}😀${'b'.repeat(10)}`;
    const cut = (await answering(emoji).callTool(call, signal)).content;
    expect(cut.startsWith(`${'a'.repeat(TOOL_RESULT_AT_MOST - 1)}\n`)).toBe(true);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
