/**
 * The README's way to try homed with no model at hand: `npm run stand-in-model` serves a stand-in
 * model, `homed init` is pointed at it, and homed answers, sets a reminder that comes back,
 * streams a long story, and calls the tools it is told to. A port already taken is refused with what to do.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, logOf, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { finished, HOMED, REPO, runNodeWithInput, spawnNode } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const STAND_IN = join(REPO, 'test/support/llmServer/standInModel.ts');

/** The stand-in on a free port (as `npm run stand-in-model -- --port 0`), and the URL it prints. */
const startStandIn = async () => {
  const child = spawnNode(['--import', 'tsx', STAND_IN, '--port', '0']);
  daemons.onCleanup(async () => {
    child.kill('SIGINT');
    if (child.exitCode === null) await once(child, 'exit');
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await expect.poll(() => out, { timeout: 20_000 }).toContain('set it up with: ');
  return { url: /on (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out)![1]!, port: /:(\d+)\/v1/.exec(out)![1]! };
};

const chunksOf = (replies: Awaited<ReturnType<typeof askSocket>>): string =>
  replies
    .filter((r) => r.type === 'chunk')
    .map((r) => r.text)
    .join('');

describe('the stand-in model', () => {
  it('answers through homed once init points at it, sets a reminder that comes back, and tells a long story', async () => {
    const { url, port } = await startStandIn();
    const dir = join(tempDir(), 'data');
    const init = await runNodeWithInput([HOMED, 'init', '--data', dir, '--adapter', 'openai', '--url', url, '--model', 'stand-in'], '\n');
    expect(init.code, init.stdout + init.stderr).toBe(0);
    expect(init.stdout).toContain('it answered: "You said: ');
    const daemon = await daemons.start(dir);
    expect(chunksOf(await askSocket(dir, 'hello there'))).toBe('You said: hello there');
    expect(chunksOf(await askSocket(dir, 'remind me in 1 second to stretch'))).toBe('Done: I will remind you.');
    await expect
      .poll(async () => (await logOf(dir, '--type', 'OutputSent')).map((e) => e.data.text), { timeout: 20_000 })
      .toContain('Reminder: stretch');
    expect(chunksOf(await askSocket(dir, 'tell me a long story'))).toMatch(/^and then step 1 of the long story happened, .* the end\.$/);
    // Told to call a tool, any plugin's, it does, and says what the tool answered, or that the firewall refused it.
    expect(chunksOf(await askSocket(dir, 'call files_write with path=notes/a.txt content="a note for later"'))).toMatch(
      /^files_write answered: .*notes\/a\.txt/,
    );
    expect(chunksOf(await askSocket(dir, 'call files_read with {"path": "notes/a.txt"}'))).toMatch(
      /^files_read answered: .*a note for later/,
    );
    expect(chunksOf(await askSocket(dir, 'call files_read with path=/etc/passwd'))).toMatch(/^The call of files_read was refused: /);
    expect(chunksOf(await askSocket(dir, 'call files_read with path'))).toBe(
      'I cannot call files_read: write the arguments as key=value pairs or a JSON object, not: path',
    );
    await daemons.stop(daemon);
    await verifyReplay(dir);

    const taken = await finished(spawnNode(['--import', 'tsx', STAND_IN, '--port', port]));
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`port ${port} is taken; pass another: npm run stand-in-model -- --port N`);
  });
});
