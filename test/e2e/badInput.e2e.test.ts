/**
 * Bad input reaches the user as a clear error (no stack trace only), never as a corrupted
 * log, and never as a silently skipped event.
 */
import { chmodSync, mkdirSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../adapters/sqlite/openDatabase.ts';
import {
  finished,
  hasNoStackTrace,
  HOMED,
  runHomed,
  spawnNode,
  spawnNodeBoundByPermissions,
  WAITER,
  waitForLine,
} from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

/** A data dir with a real log, made by starting and stopping homed once. */
const dataDirWithLog = async (): Promise<string> => {
  const dir = join(tempDir(), 'data');
  const daemon = spawnNode([HOMED, '--data', dir]);
  const done = finished(daemon);
  await waitForLine(daemon, /ready/);
  daemon.kill('SIGTERM');
  expect((await done).code).toBe(0);
  return dir;
};

const editLog = (dir: string, sql: string, ...params: unknown[]) => {
  const db = openDatabase(join(dir, 'events.db'));
  db.prepare(sql).run(...params);
  db.close();
};

describe('bad input', () => {
  it('a corrupted payload row: log prints the events before it, then names the row; nothing is skipped', async () => {
    const dir = await dataDirWithLog();
    editLog(dir, 'UPDATE events SET data = ? WHERE seq = 3', Buffer.from([0xc1, 0xff, 0x00]));
    const log = await runHomed(['log', '--data', dir]);
    expect(log.code).toBe(1);
    expect(
      log.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { seq: number }).seq),
    ).toEqual([1, 2]);
    expect(log.stderr).toContain('event seq 3 cannot be read');
    expect(log.stderr).toContain('--raw');
    expect(hasNoStackTrace(log.stderr)).toBe(true);
    const raw = await runHomed(['log', '--data', dir, '--raw', '--from', '3', '--to', '3']);
    expect(raw.code).toBe(0);
    expect(JSON.parse(raw.stdout)).toMatchObject({ seq: 3, data: { $bytes: Buffer.from([0xc1, 0xff, 0x00]).toString('base64') } });
    const replay = await runHomed(['replay', '--data', dir]);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain('event seq 3 cannot be read');
    expect(hasNoStackTrace(replay.stderr)).toBe(true);
  });

  it('an unknown event type: the daemon refuses to start rather than skip it', async () => {
    const dir = await dataDirWithLog();
    // The newest event: the tailing projection has not applied it yet, so start-up must read it.
    editLog(dir, "UPDATE events SET type = 'RemovedLongAgo' WHERE seq = (SELECT max(seq) FROM events)");
    const start = await runHomed(['--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain("event type 'RemovedLongAgo' is not declared");
    expect(start.stderr).toMatch(/event seq \d+/);
    expect(hasNoStackTrace(start.stderr)).toBe(true);
    const log = await runHomed(['log', '--data', dir]);
    expect(log.code).toBe(1);
    expect(log.stderr).toContain("'RemovedLongAgo'");
  });

  it('a truncated database file is refused with what to do', async () => {
    const dir = await dataDirWithLog();
    const db = openDatabase(join(dir, 'events.db'));
    db.exec('CREATE TABLE filler (x BLOB)');
    const insert = db.prepare('INSERT INTO filler VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run(Buffer.alloc(4096, i));
    db.close();
    truncateSync(join(dir, 'events.db'), 300_000);
    const start = await runHomed(['--data', dir]);
    expect(start.code).toBe(1);
    expect(start.stderr).toContain('is truncated');
    expect(start.stderr).toContain('restore the data dir');
    expect(hasNoStackTrace(start.stderr)).toBe(true);
  });

  it('a data dir that cannot be written is refused with what to do', async () => {
    const parent = tempDir();
    const dir = join(parent, 'locked');
    mkdirSync(dir);
    chmodSync(dir, 0o555);
    const start = await finished(spawnNodeBoundByPermissions([HOMED, '--data', dir]));
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(/data dir .*locked cannot be created or written/);
    expect(start.stderr).toContain('--data DIR');
    expect(hasNoStackTrace(start.stderr)).toBe(true);
  });

  it('settings that are not JSON stop the daemon with the file, line and column named', async () => {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    writeFileSync(join(dir, 'settings.json'), '{\n  "timeZone": "UTC",\n  memory: {}\n}\n');
    const start = await runHomed(['--data', dir]);
    expect(start.code).toBe(1);
    // Where an editor finds it: the unquoted key on line 3.
    expect(start.stderr).toContain('settings.json is not valid JSON at line 3, column 3');
    expect(hasNoStackTrace(start.stderr)).toBe(true);
  });

  it('bad command-line input gets a usage error', async () => {
    const result = await runHomed(['log', '--from', 'ten']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--from must be a whole number ≥ 0, got 'ten'");
    // An empty message is a usage mistake, said before any daemon is looked for.
    const empty = await finished(spawnNode([WAITER, '--data', tempDir(), '  ']));
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('waiter: the message is empty; give the text to send');
    // A chat session's command given as a message went to the model as text: said to be a command instead.
    const command = await finished(spawnNode([WAITER, '--data', tempDir(), '/tools']));
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("waiter: '/tools' is a command of the chat session, not a message; run waiter --tools");
    const word = await finished(spawnNode([WAITER, '--data', tempDir(), 'constructor']));
    expect(word.stderr).not.toContain('command of the chat session');
    const typo = await runHomed(['lgo']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("homed: unknown command 'lgo'; did you mean log?");
    const dashed = await finished(spawnNode([WAITER, '--data', tempDir(), '-1 is negative?']));
    expect(dashed.code).toBe(2);
    expect(dashed.stderr).toContain(`words that start with '-' go after --`);
  });

  it('an empty data dir (--data "" or HOLOGRAM_DATA set to nothing) is refused, not taken as the current directory', async () => {
    const cwd = tempDir();
    const commands: [string[], NodeJS.ProcessEnv][] = [
      [[HOMED, 'run', '--data', ''], process.env],
      [[HOMED, 'log'], { ...process.env, HOLOGRAM_DATA: '' }],
      [[HOMED, 'secret', 'list'], { ...process.env, HOLOGRAM_DATA: '' }],
      [[WAITER, '--data', '', 'hello'], process.env],
    ];
    for (const [args, env] of commands) {
      const result = await finished(spawnNode(args, { cwd, env }));
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(
        /--data is empty; give the data dir|HOLOGRAM_DATA is set but empty; set it to the data dir, or unset it/,
      );
      expect(hasNoStackTrace(result.stderr)).toBe(true);
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a data dir that is a file is named as such, not as one that cannot be created', async () => {
    const file = join(tempDir(), 'notes.txt');
    writeFileSync(file, 'not a data dir');
    for (const args of [
      ['run', '--data', file],
      ['log', '--data', file],
    ]) {
      const result = await runHomed(args);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`the data dir ${file} is a file; give --data a folder, or move that away`);
    }
    // waiter said to start homed on it, which then failed so (a newcomer's report).
    const waiter = await finished(spawnNode([WAITER, '--data', file, 'hi']));
    expect(waiter.code).toBe(1);
    expect(waiter.stderr).toBe(`waiter: the data dir ${file} is a file; give --data a folder, or move that away\n`);
  });
});
