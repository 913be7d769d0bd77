/**
 * Inputs queued behind a long task, through homed: once the agent has been busy past
 * `scheduler.offloadAfterMs`, each waiting message is told so on its channel at once, stays
 * queued, and then gets its own answer. None is dropped.
 */
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const BUSY = 'Busy with another task; this message is queued and will be answered after it.';

describe('a backlog behind a long task', () => {
  it('tells each queued message the agent is busy, then answers every one of them', async () => {
    const llm = await startLlmServer([
      { text: 'a long answer that takes its time to arrive', slow: { chunkDelayMs: 300 } },
      { text: 'second answered' },
      { text: 'third answered' },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, settings: { scheduler: { offloadAfterMs: 500 } } });
    const daemon = await daemons.start(dir);

    const first = askSocket(dir, 'first');
    await llm.received(1);
    const second = askSocket(dir, 'second');
    const third = askSocket(dir, 'third');
    const [one, two, three] = await Promise.all([first, second, third]);
    await daemons.stop(daemon);

    expect(one.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    for (const [name, replies] of [
      ['second', two],
      ['third', three],
    ] as const) {
      const texts = replies.filter((r) => r.type === 'message' || r.type === 'chunk').map((r) => r.text);
      expect(texts[0], `${name}: told it waits before its answer`).toBe(BUSY);
      expect(texts.slice(1).join(''), `${name}: then answered`).toBe(`${name} answered`);
      expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    }
    expect((await logOf(dir, '--type', 'BacklogAcknowledged')).length).toBeGreaterThanOrEqual(1);
    expect(await logOf(dir, '--type', 'BacklogOffloaded')).toEqual([]);
    await verifyReplay(dir);
  });
});
