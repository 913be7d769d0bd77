/**
 * A command that uses a data dir pointed at one that does not exist: only starting homed and
 * `homed init` make one. Every other command is refused in one line that says so and how to make
 * it, and leaves nothing behind (a typo in --data must not leave a stray folder, nor a second
 * memory).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasNoStackTrace, runHomed, runNodeWithInput, HOMED } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

describe('a data dir that does not exist', () => {
  it('is not made by homed chat or homed secret: each refuses in one line, saying how to make one', async () => {
    const root = tempDir();
    const runs = {
      chat: (dir: string) => runHomed(['chat', '--data', dir, 'hi']),
      'chat --llm': (dir: string) => runHomed(['chat', '--data', dir, '--llm', 'openai=http://127.0.0.1:9/v1', '--model', 'm', 'hi']),
      'secret set': (dir: string) => runNodeWithInput([HOMED, 'secret', 'set', 'MY_KEY', '--data', dir], 'a long value\n'),
      'secret list': (dir: string) => runHomed(['secret', 'list', '--data', dir]),
      'secret rm': (dir: string) => runHomed(['secret', 'rm', 'MY_KEY', '--data', dir]),
    };
    for (const [command, run] of Object.entries(runs)) {
      // A path with a space: the commands it suggests quote it.
      const dir = join(root, 'no such', 'data dir');
      const refused = await run(dir);
      expect(refused.code, `${command}: ${refused.stderr}`).toBe(1);
      expect(refused.stdout, command).toBe('');
      expect(refused.stderr, command).toBe(
        `homed: the data dir ${dir} does not exist; make it with: homed init --data '${dir}' (it sets up the model), ` +
          `or start homed on it: homed --data '${dir}'\n`,
      );
      expect(hasNoStackTrace(refused.stderr), command).toBe(true);
      expect(existsSync(join(root, 'no such')), `${command} left a folder behind`).toBe(false);
    }
  });
});
