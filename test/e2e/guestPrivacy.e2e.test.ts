/**
 * A plugin's guest and your memory, through homed: a red-team run had a guest (the visitor
 * fixture's `visitor.guest`) read your cold diary back with coldcontext_query (moving it into
 * your context), list your conversations with memory_introspect, and list and cancel your
 * private timer. Here your turn files a diary note, a graph fact and a timer; then the guest's
 * turn asks for all of them, and nothing of yours reaches the model in that turn, in any request.
 */
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { messagesOf, startLlmServer } from '../support/llmServer/index.ts';
import { finished, REPO, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const DIARY = 'PRIVATE diary: the safe code is 9917';
const TIMER_NOTE = 'PRIVATE: call the clinic about the biopsy';
const PRIVATE_WORDS = ['9917', 'biopsy', 'cli:'];

describe("a plugin's guest and the owner's memory", () => {
  it('reads none of your cold docs, graph facts, conversations or timers, and cancels none of your timers', async () => {
    const server = await startLlmServer([
      {
        toolCalls: [
          { id: 'diary', name: 'coldcontext_commit', arguments: { text: DIARY } },
          // Worded as the guest's message is, so the turn's own recall would bring it in.
          {
            id: 'fact',
            name: 'memory_commit',
            arguments: { triples: [{ subject: 'my API token', predicate: 'is stored in', object: 'safe 9917' }] },
          },
          { id: 'timer', name: 'timer_set', arguments: { seconds: 86_400, note: TIMER_NOTE } },
        ],
      },
      { text: 'Noted.' },
      {
        toolCalls: [
          { id: 'cold', name: 'coldcontext_query', arguments: { query: 'diary safe code' } },
          { id: 'recall', name: 'memory_recall', arguments: { query: 'API token safe' } },
          { id: 'stats', name: 'memory_introspect', arguments: {} },
          { id: 'list', name: 'timer_list', arguments: {} },
          { id: 'cancel', name: 'timer_cancel', arguments: { id: 't1' } },
        ],
      },
      { text: 'Done.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    let daemon = await daemons.start(dir);
    expect((await finished(spawnNode([WAITER, '--data', dir, 'note my safe code and the clinic call']))).stdout).toBe('Noted.\n');
    await daemons.stop(daemon);
    const yours = server.requests.length;

    symlinkSync(join(REPO, 'test/fixtures/plugins/host/visitor'), join(dir, 'plugins', 'visitor'));
    daemon = await daemons.start(dir);
    // Yours, then the guest's.
    await expect.poll(async () => (await logOf(dir, '--type', 'TurnCompleted')).length, { timeout: 30_000, interval: 300 }).toBe(2);
    const asked = await logOf(dir, '--type', 'TurnRequested');
    expect(asked.map((e) => e.data.principal)).toEqual(['owner', 'visitor.guest']);
    await daemons.stop(daemon);

    const guestTurn = server.requests.slice(yours);
    expect(guestTurn).toHaveLength(2);
    const told = messagesOf(guestTurn[1]!).filter((m) => m.role === 'tool');
    expect(told).toHaveLength(5);
    for (const request of guestTurn) for (const word of PRIVATE_WORDS) expect(request.rawBody, word).not.toContain(word);
    // Your timer is still set, and your diary still in cold context (not moved into a context of yours by the guest).
    const timers = JSON.parse(readFileSync(join(dir, 'state', 'timer', 'timers.json'), 'utf8')) as { timers: { note: string }[] };
    expect(timers.timers.map((t) => t.note)).toEqual([TIMER_NOTE]);
    expect(await logOf(dir, '--type', 'ColdDocRemoved')).toEqual([]);
    await verifyReplay(dir);
  });
});
