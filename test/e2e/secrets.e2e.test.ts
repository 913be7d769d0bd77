import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, HOMED, runHomed, runNodeWithInput, spawnNode, WAITER } from '../support/processes.ts';
import { everyFileText } from '../support/everyFile.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const VALUE = 'sk-e2e-vault-4f1c9a7d2b';

const secret = (dir: string, args: string[], stdin = '') => runNodeWithInput([HOMED, 'secret', ...args, '--data', dir], stdin);

describe('homed secret', () => {
  it('stores a key from stdin that the model server gets and nothing else shows', async () => {
    const server = await startLlmServer([{ text: 'keyed answer' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm', apiKeySecret: 'OPENAI_KEY' }],
    });
    const stored = await secret(dir, ['set', 'OPENAI_KEY'], `${VALUE}\n`);
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stdout).toContain('stored OPENAI_KEY');
    expect((await secret(dir, ['list'])).stdout).toBe('OPENAI_KEY\n');
    const asArgument = await secret(dir, ['set', 'OPENAI_KEY', VALUE]);
    expect(asArgument.code).toBe(2);
    expect(asArgument.stderr).toContain('the value is read from stdin, never from the command line');
    expect(asArgument.stderr).not.toContain(VALUE);

    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'hello?']));
    expect(reply.stdout).toBe('keyed answer\n');
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${VALUE}`);
    await daemons.stop(daemon);

    const log = await runHomed(['log', '--data', dir]);
    const seen = [
      daemon.output,
      (await daemon.exited).stdout,
      reply.stdout,
      reply.stderr,
      log.stdout,
      JSON.stringify(server.requests.map((r) => r.body)),
    ];
    for (const text of seen) expect(text).not.toContain(VALUE);
    expect(everyFileText(dir), 'the value in clear in the data dir').not.toContain(VALUE);
    await verifyReplay(dir);
  });

  it('stops the daemon with what to run when a source names a secret that is not in the vault', async () => {
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'MISSING_KEY' }],
    });
    const run = await runHomed(['run', '--data', dir]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("no secret MISSING_KEY in the vault; set it with 'homed secret set MISSING_KEY'");
    expect(hasNoStackTrace(run.stderr)).toBe(true);
    const removed = await secret(dir, ['rm', 'MISSING_KEY']);
    // Not a usage mistake: exit 1, and no usage hint.
    expect(removed.code).toBe(1);
    expect(removed.stderr).toContain('no secret MISSING_KEY in the vault');
    expect(removed.stderr).not.toContain('--help');
  });
});
