/**
 * What the model gets, through homed: a persona and the current time in the system prompt, and
 * a request that stays within the source's declared window however long the conversation
 * grows, with a history that starts with the user's words (strict chat templates refuse
 * anything else), and the tool calls of earlier turns with their results. Tokens are counted
 * as the kernel estimates them, four characters each.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const WINDOW = 8_192;
const MESSAGES = 30;

type ChatBody = {
  messages: { role: string; content: string | null; tool_calls?: { id: string }[]; tool_call_id?: string }[];
  tools?: unknown[];
};

const estimatedTokens = (body: ChatBody): number =>
  Math.ceil((body.messages.reduce((n, m) => n + (m.content ?? '').length, 0) + JSON.stringify(body.tools ?? []).length) / 4);

/** About 1,000 characters (250 tokens) about topic `i`, unlike every other message. */
const longMessage = (i: number): string =>
  `Message ${i} about the garden plot number ${i}: ${Array.from({ length: 60 }, (_, k) => `w${i}x${k}`).join(' ')}`.padEnd(1_000, '.');

describe('the prompt homed sends', () => {
  it('keeps every request within the declared window, starting its history with a user message', async () => {
    const llm = await startLlmServer(Array.from({ length: MESSAGES }, (_, i) => ({ text: `noted ${i}` })));
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: llm.baseUrl('openai'), model: 'm', contextWindow: WINDOW }],
      // L1 may hold more than one prompt carries: the turn itself must cut the conversation.
      settings: { timeZone: 'Europe/Paris', memory: { budgetTokens: 40_000 } },
    });
    writeFileSync(join(dir, 'persona.md'), 'You are Ada, a gardener who answers in one line.\n');
    const daemon = await daemons.start(dir);
    for (let i = 0; i < MESSAGES; i++) {
      const replies = await askSocket(dir, longMessage(i));
      expect(replies.at(-1), `message ${i}`).toMatchObject({ type: 'end', outcome: 'answer' });
    }
    await daemons.stop(daemon);

    const bodies = llm.requests.map((r) => r.body as ChatBody);
    expect(bodies).toHaveLength(MESSAGES);
    for (const [i, body] of bodies.entries()) {
      expect(estimatedTokens(body), `request ${i}`).toBeLessThanOrEqual(WINDOW * 0.8);
      const [system, first] = body.messages;
      expect(system?.role).toBe('system');
      expect(first?.role, `request ${i}: the history starts with the user`).toBe('user');
      expect(body.messages.at(-1)?.content).toBe(longMessage(i));
    }
    const last = bodies.at(-1)!;
    expect(last.messages[0]!.content).toContain('You are Ada, a gardener');
    expect(last.messages[0]!.content).toMatch(/It is now .*\(Europe\/Paris\)/);
    // The conversation was cut to fit, and the recent exchanges are what was kept.
    expect(last.messages.length).toBeLessThan(2 * MESSAGES);
    expect(last.messages.some((m) => m.content === longMessage(MESSAGES - 2))).toBe(true);
    await verifyReplay(dir);
  });

  it("sends the next turn the last turn's tool call and its result, and not a failure", async () => {
    const llm = await startLlmServer([
      { toolCalls: [{ name: 'files_list', arguments: { path: '.' } }] },
      { text: 'You have notes.txt.' },
      { status: 500, message: 'model crashed' },
      { text: 'It holds your notes.' },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm });
    mkdirSync(join(dir, 'files'));
    writeFileSync(join(dir, 'files', 'notes.txt'), 'buy seeds');
    const daemon = await daemons.start(dir);
    expect((await askSocket(dir, 'what files do I have?')).at(-1)).toMatchObject({ outcome: 'answer' });
    expect((await askSocket(dir, 'and then?')).at(-1)).toMatchObject({ outcome: 'failed' });
    expect((await askSocket(dir, 'what is in it?')).at(-1)).toMatchObject({ outcome: 'answer' });
    await daemons.stop(daemon);

    const last = (llm.requests.at(-1)!.body as ChatBody).messages.slice(1);
    const call = last.find((m) => m.tool_calls?.length);
    expect(call, 'the tool call of the first turn').toBeDefined();
    const result = last.find((m) => m.role === 'tool');
    expect(result?.tool_call_id).toBe(call!.tool_calls![0]!.id);
    expect(result?.content).toContain('notes.txt');
    expect(last.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'user']);
    expect(last[3]!.content).toBe('You have notes.txt.');
    expect(JSON.stringify(last)).not.toContain('model crashed');
    await verifyReplay(dir);
  });

  it('offers no admin memory tool by default, and a memory tool acts on the conversation that called it', async () => {
    const llm = await startLlmServer([
      { toolCalls: [{ name: 'coldcontext_commit', arguments: { text: 'Ada waters the roses on Sundays' } }] },
      { text: 'Noted.' },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm });
    const daemon = await daemons.start(dir);
    expect((await askSocket(dir, 'remember: roses on Sundays')).at(-1)).toMatchObject({ outcome: 'answer' });
    await daemons.stop(daemon);

    const tools = ((llm.requests[0]!.body as ChatBody).tools ?? []) as { function: { name: string } }[];
    const names = tools.map((t) => t.function.name);
    expect(names).toContain('memory_recall');
    for (const admin of ['memory_merge', 'memory_purge', 'memory_edit', 'memory_delete_entity']) expect(names).not.toContain(admin);
    const [input] = await logOf(dir, '--type', 'ContextEventAppended');
    const [committed] = await logOf(dir, '--type', 'ColdDocCommitted');
    expect(committed?.data).toMatchObject({ scope: (input!.data as { scope: string }).scope, text: 'Ada waters the roses on Sundays' });
  });
});
