import { describe, expect, it } from 'vitest';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, HOMED, runHomed, runNodeWithInput, spawnNode, WAITER } from '../support/processes.ts';
import { everyFileText } from '../support/everyFile.ts';
import { useTempDir } from '../support/tempDir.ts';
import { useTerminals } from '../support/tmux.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const tempDir = useTempDir();
const daemons = useDaemons();
const terminals = useTerminals();
const VALUE = 'sk-e2e-vault-4f1c9a7d2b';

const secret = (dir: string, args: string[], stdin: string | Uint8Array = '') =>
  runNodeWithInput([HOMED, 'secret', ...args, '--data', dir], stdin);

describe('homed secret', () => {
  it('stores a key from stdin that the model server gets and nothing else shows', async () => {
    const server = await startLlmServer([{ text: 'keyed answer' }]);
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: server.baseUrl('openai'), model: 'm', apiKeySecret: 'OPENAI_KEY' }],
    });
    // Pasted with spaces and a line end around it: stored without them (once sent, and never scrubbed, as typed).
    const stored = await secret(dir, ['set', 'OPENAI_KEY'], `  ${VALUE} \r\n`);
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stdout).toContain('left out the spaces and line ends around the value; stored OPENAI_KEY');
    expect((await secret(dir, ['list'])).stdout).toBe('OPENAI_KEY\n');
    // A secret for tools is used from the next message on: a turn decides its fills from the vault as it began.
    const forTools = await secret(dir, ['set', 'TOOL_KEY', '--tools', 'http_*,github_*'], 'tool-key-value-8812\n');
    expect(forTools.stdout).toBe(
      'stored TOOL_KEY; refer to it as "apiKeySecret": "TOOL_KEY" (a model source reads its key at start: restart homed after changing it), ' +
        'or as @{TOOL_KEY} in a call of http_*, github_* (used from your next message on, no restart)\n',
    );
    expect((await secret(dir, ['rm', 'TOOL_KEY'])).code).toBe(0);
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

  // Red team round 16: the page set ANTHROPIC_KEY to junk, saved a source sending it to their server, and waited for the
  // owner to set the real key with homed secret set; the next probe or start sent it there.
  it('replaces a key the web UI set, which saved sources send somewhere, only once told to, after showing where it goes', async () => {
    const evil = 'http://127.0.0.1:9/v1';
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'backup', adapter: 'openai', baseUrl: evil, model: 'm', apiKeySecret: 'ANTHROPIC_KEY' }],
    });
    SecretVault.open(dir).set('ANTHROPIC_KEY', 'junk-the-page-set', [], { fromPage: true });
    const refused = await secret(dir, ['set', 'ANTHROPIC_KEY'], 'sk-ant-the-owners-own-4567\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `ANTHROPIC_KEY was set from the web UI, and the saved model sources send it to ${evil} (source backup)`,
    );
    expect(SecretVault.open(dir).get('ANTHROPIC_KEY')).toBe('junk-the-page-set');
    const kept = await secret(dir, ['set', 'ANTHROPIC_KEY', '--keep-sources'], 'sk-ant-the-owners-own-4567\n');
    expect(kept.code, kept.stderr).toBe(0);
    expect(SecretVault.open(dir).get('ANTHROPIC_KEY')).toBe('sk-ant-the-owners-own-4567');
    expect(SecretVault.open(dir).setFromPage('ANTHROPIC_KEY')).toBe(false);
  });

  it('stops the daemon with what to run when a source names a secret that is not in the vault', async () => {
    const dir = testDataDir(tempDir(), {
      sources: [{ name: 'local', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'MISSING_KEY' }],
    });
    SecretVault.open(dir).set('MISSING_KEYS', 'a-value-stored-under-a-near-name');
    const run = await runHomed(['run', '--data', dir]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(
      "no secret MISSING_KEY in the vault (did you mean MISSING_KEYS?); set it with 'homed secret set MISSING_KEY'",
    );
    expect(hasNoStackTrace(run.stderr)).toBe(true);
    const removed = await secret(dir, ['rm', 'MISSING_KEY']);
    // Not a usage mistake: exit 1, and no usage hint.
    expect(removed.code).toBe(1);
    expect(removed.stderr).toContain('no secret MISSING_KEY in the vault');
    expect(removed.stderr).not.toContain('--help');
  });

  it('tells a mistake on the command line, a value too short (or easy to guess), a --data that is a file and a Ctrl-C at the prompt apart', async () => {
    const dir = tempDir();
    const badName = await secret(dir, ['set', 'my_key'], 'long enough\n');
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('my_key');
    const noName = await secret(dir, ['set']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toBe("homed: homed secret set needs the secret's NAME\nRun 'homed secret --help' for usage.\n");
    const short = await secret(dir, ['set', 'PIN'], 'Zq9\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('has 3 character(s); a secret needs at least 4');
    // Bytes that are no UTF-8, or a file piped by mistake: refused, not stored changed or whole.
    const notText = await secret(dir, ['set', 'BIN'], Uint8Array.from([0xff, 0xfe, 0xfd, 0x61, 0x62, 0x63, 0x64]));
    expect(notText.code).toBe(1);
    expect(notText.stderr).toBe(
      'homed: the value for BIN on stdin is not UTF-8 text; a secret is text (a key, a token, a password), stored as it is given\n',
    );
    // A byte-order mark an editor put first is left out, and the command says so.
    const marked = await secret(dir, ['set', 'MARKED'], Buffer.from('\uFEFFtok-bom-value-1234\n'));
    expect(marked.stdout).toMatch(/^left out the spaces and line ends around the value; stored MARKED/);
    expect(SecretVault.open(dir).get('MARKED')).toBe('tok-bom-value-1234');
    const huge = await secret(dir, ['set', 'HUGE'], 'x'.repeat(200_000));
    expect(huge.code).toBe(1);
    expect(huge.stderr).toContain('is longer than 64 KiB');
    // A value easy to guess is stored, with a warning: the scrub could confirm a guess to whoever the model repeats.
    const lock = await secret(dir, ['set', 'LOCK'], '4821\n');
    expect(lock.code).toBe(0);
    expect(lock.stdout).toContain('warning: LOCK is easy to guess (about 13 bits)');
    expect((await secret(dir, ['set', 'API'], 'sk-live-9f8e7d6c5b4a\n')).stdout).not.toContain('warning');
    // Filled into the files tools, a value written to a file comes back in pieces through files_read's offset and limit.
    const filed = await secret(dir, ['set', 'FILED', '--tools', 'files_*'], 'sk-live-9f8e7d6c5b4a\n');
    expect(filed.stdout).toContain(
      'warning: --tools files_* lets the value be written to a file, and files_read hands a file back in parts',
    );
    expect((await secret(dir, ['set', 'HTTP', '--tools', 'http_get'], 'sk-live-9f8e7d6c5b4a\n')).stdout).not.toContain('warning');
    // A tool that keeps what it is given (the timers', the memory's) is never given a value: refused before one is asked for.
    const kept = await secret(dir, ['set', 'REMIND', '--tools', 'http_get,timer_set']);
    expect(kept.code).toBe(2);
    expect(kept.stderr).toBe(
      "homed: --tools: a secret is never filled into timer_set: the kernel's memory, cold context and timer tools " +
        '(memory_*, coldcontext_*, timer_*) keep what they are given, in the log and in memory; grant it to the tool that needs the value\n' +
        "Run 'homed secret --help' for usage.\n",
    );
    expect((await secret(dir, ['set', 'WIDE', '--tools', 'tim*'], 'sk-live-9f8e7d6c5b4a\n')).code).toBe(0);
    expect((await secret(dir, ['list'])).stdout).not.toMatch(/PIN|BIN|HUGE/);
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    for (const args of [['list'], ['set', 'FOO']]) {
      const onFile = await runNodeWithInput([HOMED, 'secret', ...args, '--data', file], 'a value\n');
      expect(onFile.code).toBe(1);
      expect(onFile.stderr.trim()).toBe(`homed: the data dir ${file} is a file; give --data a folder, or move that away`);
    }
    // At the prompt, Ctrl-C stores nothing and exits as an interrupted command does.
    const terminal = terminals.open([
      '/bin/sh',
      '-c',
      `"$0" "$@"; echo "exit $?"`,
      process.execPath,
      HOMED,
      'secret',
      'set',
      'TYPED',
      '--data',
      dir,
    ]);
    await terminal.waitFor(/value for TYPED \(not shown\):/);
    terminal.type('half', { enter: false });
    terminal.press('C-c');
    const screen = await terminal.waitFor(/exit \d+/);
    expect(screen).toContain('homed: cancelled: nothing was stored');
    expect(screen).toContain('exit 130');
    expect(screen).not.toContain('--help');
    expect((await secret(dir, ['list'])).stdout).not.toContain('TYPED');
  });
});
