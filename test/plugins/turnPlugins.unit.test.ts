/** A plugin tool's answer as the turn's plugins give it: whole, a string or a reply object; anything else said as the tool's mistake. */
import { describe, expect, it } from 'vitest';
import type { PluginHub } from '../../plugins/host/pluginHub.ts';
import { TOOL_RESULT_AT_MOST } from '../../actors/turn/boundedResult.ts';
import { turnPluginsOf } from '../../plugins/host/turnPlugins.ts';

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

  // Cut here, before the proxy's scrub, a hostile tester's answer kept all of a secret's value but its last character.
  it('passes a big answer whole, for the security proxy to scrub before it cuts', async () => {
    const big = 'B'.repeat(TOOL_RESULT_AT_MOST * 2);
    expect(await answering(big).callTool(call, signal)).toEqual({ content: big });
  });
});
