/**
 * A Lua memory bomb against the running daemon: the model calls a Lua plugin's tool that doubles
 * a string forty times, three times over. Each call fails with the plugin's memory limit in the
 * message (and a pattern match of exponential cost fails with the instruction budget), the daemon answers every message, its RSS stays under 400 MB, the plugin keeps none
 * of what the bomb built, and the log replays.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { askSocket, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const rssMb = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const answer = (replies: { type: string; text?: string }[]) =>
  replies
    .filter((r) => r.type === 'chunk')
    .map((r) => r.text)
    .join('');

describe('a Lua memory bomb through homed', () => {
  it('fails the call at the limit three times over; the daemon stays responsive and under 400 MB', async () => {
    const bombThenAnswer = (i: number) => [
      { toolCalls: [{ id: `call_bomb_${i}`, name: 'bomb', arguments: {} }] },
      { text: `Bomb ${i} was stopped.` },
    ];
    const server = await startLlmServer([
      ...bombThenAnswer(1),
      ...bombThenAnswer(2),
      ...bombThenAnswer(3),
      { toolCalls: [{ id: 'call_backtrack', name: 'backtrack', arguments: {} }] },
      { text: 'The match was stopped.' },
      { toolCalls: [{ id: 'call_tally', name: 'tally', arguments: {} }] },
      { text: 'Tallied.' },
    ]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['luabomb'] });
    const daemon = await daemons.start(dir);
    const pid = daemon.process.pid!;

    for (let i = 1; i <= 3; i++) {
      expect(answer(await askSocket(dir, `Set off bomb ${i}`))).toBe(`Bomb ${i} was stopped.`);
      const toolResult = JSON.stringify(server.requests.at(-1)!.body);
      expect(toolResult).toContain("Lua plugin 'luabomb' used more than 48 MB");
      expect(toolResult).not.toMatch(/built \d+ bytes/);
      expect(rssMb(pid)).toBeLessThan(400);
    }

    // A match that backtracks exponentially is priced before it runs and refused by the budget.
    expect(answer(await askSocket(dir, 'Match the pattern'))).toBe('The match was stopped.');
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain("tool 'backtrack' ran more than 2000000 Lua instructions");

    expect(answer(await askSocket(dir, 'What does the plugin hold?'))).toBe('Tallied.');
    // The script was reloaded after each bomb: a fresh count, and no 32 MB string kept.
    expect(JSON.stringify(server.requests.at(-1)!.body)).toContain('calls 1, holding 0 bytes');
    expect(rssMb(pid)).toBeLessThan(400);

    await daemons.stop(daemon);
    await verifyReplay(dir);
  });
});
