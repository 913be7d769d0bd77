/**
 * One daemon per data dir, the way users and accidents meet it: a second `homed run`, two
 * started at once, a SIGKILL and a restart, a pid file that lies, `homed chat` on a dir a
 * daemon holds (sent through it, even while it boots; its overriding flags refused) or another
 * writer holds, and `homed replay --out` into a dir a daemon holds. The refused process starts
 * nothing and writes nothing; readers keep working; the dir always boots again.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, HOMED, REPO, runHomed, spawnNode, waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const pidFileOf = (dir: string) => readFileSync(join(dir, 'homed.pid'), 'utf8').split('\n');

/** A refusal as the user sees it: exit 1, one line on stderr naming the holder, nothing started. */
const expectRefused = (
  result: { code: number | null; stdout: string; stderr: string },
  holderPid: number,
  /** At the same moment the holder may have its lock and not yet its pid file: then only the pid is known. */
  { commandKnown = true } = {},
) => {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  if (commandKnown) expect(result.stderr).toContain(`is in use by homed run (pid ${holderPid})`);
  else expect(result.stderr).toMatch(new RegExp(`is in use by (homed run|another homed process) \\(pid ${holderPid}\\)`));
  expect(hasNoStackTrace(result.stderr)).toBe(true);
  expect(result.stdout).not.toMatch(/layer|plugin|ready/);
};

/**
 * A plugin in the data dir whose handshake waits (up to 9 s, under the host's 10 s handshake
 * timeout) until `release()`: the daemon's boot waits for it, so the boot is still going on.
 */
const holdBootUntilReleased = (dir: string) => {
  const plugin = join(dir, 'plugins', 'slowstart');
  mkdirSync(plugin);
  writeFileSync(join(plugin, 'package.json'), '{"type": "module"}'); // top-level await in main.ts
  writeFileSync(join(plugin, 'plugin.json'), JSON.stringify({ name: 'slowstart', version: '1.0.0', entry: 'main.ts', capabilities: [] }));
  writeFileSync(
    join(plugin, 'main.ts'),
    `import { existsSync } from 'node:fs';
import { runPlugin } from ${JSON.stringify(join(REPO, 'plugins/sdk/index.ts'))};
const until = Date.now() + 9_000;
while (!existsSync('go') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
await runPlugin({ name: 'slowstart', version: '1.0.0' }, async () => undefined);
`,
  );
  return { release: () => writeFileSync(join(plugin, 'go'), '') };
};

describe('one daemon per data dir', () => {
  it('refuses a second homed run in one line naming the running daemon, which goes on untouched and answers', async () => {
    const server = await startLlmServer([{ text: 'Still here.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    const first = await daemons.start(dir);
    const before = await logOf(dir);

    const second = await runHomed(['run', '--data', dir]);
    expectRefused(second, first.process.pid!);
    expect(second.stderr).toContain(`kill -TERM ${first.process.pid}`);

    expect(await logOf(dir)).toEqual(before);
    expect(pidFileOf(dir)).toEqual([String(first.process.pid), 'homed run', '']);
    const plugins = await runHomed(['plugins', '--data', dir]);
    expect(plugins.stdout).not.toContain('not running'); // live, from the first daemon's socket
    expect(plugins.stdout).toMatch(/^cli\s+builtin\s+running/m);
    const replies = await askSocket(dir, 'are you still there?');
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    expect(replies.map((reply) => reply.text ?? '').join('')).toContain('Still here.');
    expect(server.requests).toHaveLength(1); // the first daemon's turn; the refused one called nothing
    await daemons.stop(first);
    expect((await logOf(dir, '--type', 'KernelStarted')).length).toBe(1);
    await verifyReplay(dir);
  });

  it('refuses a second daemon started while the first is still booting', async () => {
    const dir = testDataDir(tempDir());
    const gate = holdBootUntilReleased(dir);
    const first = spawnNode([HOMED, 'run', '--data', dir]);
    const firstDone = finished(first);
    const ready = waitForLine(first, /homed: ready/);
    let output = '';
    first.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitForLine(first, /plugin cli: listening/); // booting: the plugins are starting
    const second = await runHomed(['run', '--data', dir]);
    expect(output).not.toContain('homed: ready'); // the slow plugin still holds the boot
    expectRefused(second, first.pid!);
    gate.release();
    await ready;
    first.kill('SIGTERM');
    expect((await firstDone).code).toBe(0);
    expect((await logOf(dir, '--type', 'KernelStarted')).length).toBe(1);
    await verifyReplay(dir);
  });

  it('of two daemons started at the same moment, exactly one runs and the other names it', async () => {
    const dir = testDataDir(tempDir());
    const children = [spawnNode([HOMED, 'run', '--data', dir]), spawnNode([HOMED, 'run', '--data', dir])];
    const exits = children.map((child) => finished(child));
    const readies = children.map((child) => waitForLine(child, /homed: ready/).catch(() => undefined));
    const outcome = await Promise.race(exits.map((exit, i) => exit.then((result) => ({ loser: i, result }))));
    const winner = children[1 - outcome.loser]!;
    expectRefused(outcome.result, winner.pid!, { commandKnown: false });
    await readies[1 - outcome.loser];
    winner.kill('SIGTERM');
    expect((await exits[1 - outcome.loser]!).code).toBe(0);
    const boots = await logOf(dir, '--type', 'KernelStarted');
    expect(boots.map((e) => e.data.pid)).toEqual([winner.pid]);
    await verifyReplay(dir);
  });

  it('starts at once after a SIGKILL: the stale pid file and lock file block nothing', async () => {
    const dir = testDataDir(tempDir());
    const killed = await daemons.start(dir);
    killed.process.kill('SIGKILL');
    await killed.exited;
    expect(pidFileOf(dir)[0]).toBe(String(killed.process.pid)); // left behind, naming a dead process

    const next = await daemons.start(dir);
    expect(pidFileOf(dir)[0]).toBe(String(next.process.pid));
    await daemons.stop(next);
    await verifyReplay(dir);
  });

  it('does not believe a pid file naming a live unrelated process, either way', async () => {
    const dir = testDataDir(tempDir());
    const bystander = spawnNode(['-e', 'setInterval(() => {}, 1000)']);
    daemons.onCleanup(() => {
      bystander.kill('SIGKILL');
      return undefined;
    });
    writeFileSync(join(dir, 'homed.pid'), `${bystander.pid}\nhomed run\n`);
    // The lock is free: the pid file is not the lock, so the daemon starts and replaces it.
    const daemon = await daemons.start(dir);
    expect(pidFileOf(dir)[0]).toBe(String(daemon.process.pid));

    // The lock is held and the pid file lies: the refusal names the holder the kernel reports.
    writeFileSync(join(dir, 'homed.pid'), `${bystander.pid}\nhomed run\n`);
    const second = await runHomed(['run', '--data', dir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`(pid ${daemon.process.pid})`);
    expect(second.stderr).not.toContain(String(bystander.pid));
    await daemons.stop(daemon);
  });

  it("refuses homed chat's overriding flags on a dir a daemon holds, calls no model and writes nothing; runs once the daemon is gone", async () => {
    const server = await startLlmServer([{ text: 'Hello from the model.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir());
    const daemon = await daemons.start(dir);
    const before = await logOf(dir);
    const chat = ['chat', '--data', dir, '--llm', `openai=${server.baseUrl('openai')}`, '--model', 'm', 'hi'];

    // Without the flags chat would talk to the daemon; with them it would need the daemon's settings changed.
    const refused = await runHomed(chat);
    expectRefused(refused, daemon.process.pid!);
    expect(refused.stderr).toContain('--llm, --model cannot be used');
    expect(server.requests).toHaveLength(0);
    expect(await logOf(dir)).toEqual(before);

    await daemons.stop(daemon);
    const ran = await runHomed(chat);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('Hello from the model.\n');
    await verifyReplay(dir);
  });

  it('sends homed chat through a daemon still booting, answered once the boot is done', async () => {
    const server = await startLlmServer([{ text: 'Booted and answering.' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server });
    const gate = holdBootUntilReleased(dir);
    const first = spawnNode([HOMED, 'run', '--data', dir]);
    const firstDone = finished(first);
    const ready = waitForLine(first, /homed: ready/);
    await waitForLine(first, /plugin cli: listening/); // booting: the socket answers, a plugin still holds the boot
    const chat = finished(spawnNode([HOMED, 'chat', '--data', dir, 'are you up?']));
    gate.release();
    await ready;
    const answered = await chat;
    expect(answered.stderr).toBe('');
    expect(answered.stdout).toBe('Booted and answering.\n');
    first.kill('SIGTERM');
    expect((await firstDone).code).toBe(0);
    expect((await logOf(dir, '--type', 'KernelStarted')).length).toBe(1);
    await verifyReplay(dir);
  });

  it('refuses homed chat in one line while a writer that is no daemon holds the dir, and starts nothing', async () => {
    const dir = testDataDir(tempDir(), { sources: [{ name: 'never', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }] });
    const holder = spawnNode(
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { lockDataDir } from ${JSON.stringify(join(REPO, 'cli/dataDirLock.ts'))};
// Held in a global: a lock nobody refers to is collected, and its descriptor closed with it.
globalThis.held = lockDataDir(${JSON.stringify(dir)}, 'homed replay --out');
console.log('locked');
setInterval(() => undefined, 1000);`,
      ],
      { cwd: REPO },
    );
    daemons.onCleanup(() => {
      holder.kill('SIGKILL');
      return undefined;
    });
    await waitForLine(holder, /locked/);
    const refused = await runHomed(['chat', '--data', dir, 'hi']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`is in use by homed replay --out (pid ${holder.pid}), whose cli socket does not answer`);
    expect(hasNoStackTrace(refused.stderr)).toBe(true);
    expect(existsSync(join(dir, 'events.db'))).toBe(false);
  });

  it('keeps the readers working beside the daemon, and refuses replay --out into the dir it holds', async () => {
    const dir = testDataDir(tempDir());
    const daemon = await daemons.start(dir);
    const log = await runHomed(['log', '--data', dir, '--stream', 'kernel']);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain('"KernelStarted"');
    const replay = await runHomed(['replay', '--data', dir]);
    expect(replay.code, replay.stderr).toBe(0);
    await verifyReplay(dir);
    const rebuilt = join(tempDir(), 'rebuilt.db');
    const outside = await runHomed(['replay', '--data', dir, '--out', rebuilt]);
    expect(outside.code, outside.stderr).toBe(0);
    // A second rebuild may replace the first; a file that is no rebuild, or a folder not there, is refused naming --out.
    expect((await runHomed(['replay', '--data', dir, '--out', rebuilt])).code).toBe(0);
    const notes = join(tempDir(), 'notes.txt');
    writeFileSync(notes, 'my notes\n');
    const overNotes = await runHomed(['replay', '--data', dir, '--out', notes]);
    expect(overNotes.code).toBe(2);
    expect(overNotes.stderr).toContain(`--out ${notes} exists and is not a database a rebuild wrote`);
    expect(readFileSync(notes, 'utf8')).toBe('my notes\n');
    const pipe = join(tempDir(), 'pipe.db');
    execFileSync('mkfifo', [pipe]);
    const overPipe = await runHomed(['replay', '--data', dir, '--out', pipe]);
    expect(overPipe.code).toBe(2);
    expect(overPipe.stderr).toContain(`--out ${pipe} exists and is not a database a rebuild wrote`);
    const nowhere = await runHomed(['replay', '--data', dir, '--out', join(tempDir(), 'no', 'such', 'x.db')]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('does not exist; make it first');

    const inside = await runHomed(['replay', '--data', dir, '--out', join(dir, 'rebuilt.db')]);
    expectRefused(inside, daemon.process.pid!);
    const intoLog = await runHomed(['replay', '--data', dir, '--out', join(dir, 'events.db')]);
    expect(intoLog.code).toBe(2);
    expect(intoLog.stderr).toContain('is the event log itself');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });
});
