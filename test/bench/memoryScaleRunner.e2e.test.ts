/**
 * `npm run bench:memory-scale` run as a person runs it, at its smallest sizes: it reaches its
 * table and writes every size's row. It once ended silently after the first size (exit 13: it
 * waited only on the system's unref'd timers while the RSS settled).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

const TOPICS = ['the garden', 'a trip to Lisbon', 'the new job', 'a painting class', 'the dog Max', 'a concert'];

/** A small conversation in LoCoMo's shape (the runner feeds it again and again, later each time): the test ships its own data. */
const writeConversation = (dir: string): void => {
  mkdirSync(dir, { recursive: true });
  const sessions = Object.fromEntries(
    [1, 2, 3].flatMap((session) => [
      [`session_${session}_date_time`, `1:56 pm on ${session * 3} May, 2023`],
      [
        `session_${session}`,
        Array.from({ length: 12 }, (_, i) => ({
          speaker: i % 2 === 0 ? 'Ana' : 'Ben',
          dia_id: `D${session}:${i + 1}`,
          text: `I keep thinking about ${TOPICS[(session + i) % TOPICS.length]} and what we said on day ${session}.`,
        })),
      ],
    ]),
  );
  const qa = TOPICS.slice(0, 4).map((topic, i) => ({
    question: `What did Ana say about ${topic}?`,
    answer: topic,
    evidence: [`D1:${i + 1}`],
    category: 4,
  }));
  writeFileSync(join(dir, 'conv-test.json'), JSON.stringify({ speaker_a: 'Ana', speaker_b: 'Ben', ...sessions, qa }));
};

describe('bench:memory-scale', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('measures every size it is given and prints its targets', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-scale-'));
    dirs.push(dir);
    const json = join(dir, 'rows.json');
    writeConversation(join(dir, 'locomo'));
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/locomo/runMemoryScale.ts',
        '--data',
        join(dir, 'locomo'),
        '--sizes',
        '500,1000',
        '--questions',
        '4',
        '--passes',
        '1',
        '--no-daemon',
        '--json',
        json,
      ],
      { cwd: REPO, encoding: 'utf8', timeout: 120_000 },
    );
    expect({ status: run.status, stderr: run.stderr.slice(-2_000) }).toMatchObject({ status: 0 });
    expect(run.stdout).toMatch(/targets at 1000 utterances:/);
    type Row = {
      size: number;
      rssAfterGcMb: number;
      recallP99: number;
      referenceP99: number;
      rebuildMs: number;
      snapshotMs: number;
      snapshotMb: number;
      caughtUpMs: number;
      crashLag: number;
    };
    const { rows } = JSON.parse(readFileSync(json, 'utf8')) as { rows: Row[] };
    expect(rows.map((row) => row.size)).toEqual([500, 1000]);
    for (const row of rows) {
      expect(row.rssAfterGcMb).toBeGreaterThan(0);
      expect(row.recallP99).toBeGreaterThan(0);
      // The first size's recall, timed beside each size's: the baseline of its target.
      expect(row.referenceP99).toBeGreaterThan(0);
      // A start's index build, timed in a process of its own (indexStartChild.ts).
      expect(row.rebuildMs).toBeGreaterThan(0);
      expect(row.snapshotMs).toBeGreaterThan(0);
      expect(row.snapshotMb).toBeGreaterThan(0);
      // ...and the start after a crash, from the snapshot written half the size before (the child checks it was caught up).
      expect(row.caughtUpMs).toBeGreaterThan(0);
    }
    expect(rows.map((row) => row.crashLag)).toEqual([250, 500]);
  });
});
