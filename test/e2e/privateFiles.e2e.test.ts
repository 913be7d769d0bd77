/**
 * What homed creates in a data dir is private to the user whatever the umask it is started
 * with: files 0600, directories 0700, the cli socket, the log's -wal and -shm, the lock and pid
 * files, the files plugin's root and what the tools write, the timer plugin's state, a rebuild.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, HOMED, spawnNodeUnderUmask } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

/** Every path under `dir` (and `dir` itself) whose mode lets group or others in, with that mode; `made` are the test's own. */
const openToOthers = (dir: string, made: readonly string[] = []): string[] => {
  const found: string[] = [];
  const visit = (path: string) => {
    const name = relative(dir, path) || '.';
    const stat = lstatSync(path);
    if ((stat.mode & 0o077) !== 0 && !made.includes(name)) found.push(`${name} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
  };
  visit(dir);
  return found;
};

describe('a data dir under umask 000', () => {
  it('holds nothing group or others can read, from a fresh start to tools that write files and timers', async () => {
    const dir = join(tempDir(), 'data');
    const fresh = await daemons.start(dir, { umask: 0o000 });
    expect(readdirSync(dir)).toEqual(
      expect.arrayContaining(['events.db', 'events.db-wal', 'events.db-shm', 'homed.sock', 'homed.lock', 'homed.pid', 'files']),
    );
    expect(openToOthers(dir)).toEqual([]);
    await daemons.stop(fresh);

    const server = await startLlmServer([
      {
        toolCalls: [
          { id: 'call_t', name: 'timer_set', arguments: { seconds: 3600, note: 'stretch' } },
          { id: 'call_f', name: 'files_write', arguments: { path: 'notes/today.txt', content: 'remember the milk' } },
        ],
      },
      { text: 'Done: a timer and a note.' },
    ]);
    daemons.onCleanup(() => server.close());
    testDataDir(join(dir, '..'), { llm: server }); // settings.json and plugins/: the test's, not homed's
    const daemon = await daemons.start(dir, { umask: 0o000 });
    const replies = await askSocket(dir, 'set a timer and write a note');
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    expect(readdirSync(join(dir, 'state', 'timer'))).toContain('timers.json');
    expect(readdirSync(join(dir, 'files', 'notes'))).toEqual(['today.txt']);
    expect(openToOthers(dir, ['settings.json', 'plugins'])).toEqual([]);
    await daemons.stop(daemon);

    const rebuilt = join(dir, 'rebuilt.db');
    const rebuild = await finished(spawnNodeUnderUmask(0o000, [HOMED, 'replay', '--data', dir, '--out', rebuilt]));
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(openToOthers(dir, ['settings.json', 'plugins'])).toEqual([]);
    expect(readdirSync(dir)).toContain('rebuilt.db');
  });
});
