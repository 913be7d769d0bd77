/**
 * `homed init` as a new user runs it: answers typed at its questions, a local server probed
 * (its models, one tiny request), settings.json written, and then homed answers with it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { askSocket, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { HOMED, hasNoStackTrace, runNodeWithInput } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const init = (dir: string, answers: string[], flags: string[] = []) =>
  runNodeWithInput([HOMED, 'init', '--data', dir, ...flags], answers.map((a) => `${a}\n`).join(''));

describe('homed init', () => {
  it('asks, probes the server, writes settings.json keeping other settings, and the daemon then answers', async () => {
    const llm = await startLlmServer([{ text: 'ready' }, { text: 'hello from the model' }], { models: ['qwen2.5-7b', 'tiny'] });
    daemons.onCleanup(() => llm.close());
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ timeZone: 'Europe/Paris' }));
    // adapter, URL without /v1, no key, model, a context window typed wrong then right
    const done = await init(dir, ['openai', llm.url, '', 'qwen2.5-7b', '32k', '32768']);
    expect(done.code, done.stderr).toBe(0);
    // The server's models are listed before the model is asked for, the first offered as the default.
    const listed = done.stdout.indexOf('it serves 2 model(s): qwen2.5-7b, tiny');
    expect(listed).toBeGreaterThanOrEqual(0);
    expect(done.stdout.indexOf('Model [qwen2.5-7b]: ')).toBeGreaterThan(listed);
    expect(done.stdout).toContain('it answered: "ready"');
    expect(done.stdout).toContain('Context window: tokens the model reads at once');
    expect(done.stdout).toContain("'32k' is not a whole number of at least 1");
    // The next step names the data dir it was given, so the daemon and waiter it suggests use it.
    expect(done.stdout).toContain(`Next: npx homed --data ${dir}, then in another terminal: npx waiter --data ${dir} "hello"`);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toEqual({
      timeZone: 'Europe/Paris',
      llm: { sources: [{ name: 'local', adapter: 'openai', baseUrl: llm.url, model: 'qwen2.5-7b', contextWindow: 32768 }] },
    });

    const daemon = await daemons.start(dir);
    const replies = await askSocket(dir, 'hi');
    await daemons.stop(daemon);
    expect(
      replies
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('hello from the model');
  });

  it('says what failed when the server does not answer, and exits non-zero; an existing source needs --force', async () => {
    const dir = join(tempDir(), 'data');
    const down = await init(dir, [], ['--adapter', 'ollama', '--url', 'http://127.0.0.1:9', '--model', 'm']);
    expect(down.code).toBe(1);
    expect(down.stdout).toContain('a test request failed');
    expect(down.stdout).toContain('cannot reach http://127.0.0.1:9');
    expect(down.stdout).toContain(`Fix what the test request said (or start the server), then: npx homed --data ${dir}`);
    // Written anyway, and the way to correct it is said, since the next init refuses without --force.
    expect(down.stdout).toContain('to give another URL or model instead, run homed init --force');
    const again = await init(dir, [], ['--adapter', 'ollama', '--url', 'http://127.0.0.1:9', '--model', 'm']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already has llm.sources; pass --force');
    const bad = await init(dir, [], ['--adapter', 'openai', '--url', 'http://u:sk-x@127.0.0.1:9/v1', '--model', 'm', '--force']);
    expect(bad.stderr).toContain('carries credentials');
    expect(bad.stderr).not.toContain('sk-x');
    // A flag is checked before anything is asked, by the rule settings.json has.
    for (const given of ['0', 'abc']) {
      const window = await init(join(tempDir(), 'other'), ['openai'], ['--context-window', given]);
      expect(window.code).toBe(2);
      expect(window.stdout).toBe('');
      expect(window.stderr).toContain(`--context-window must be a whole number of at least 1 (tokens), got '${given}'`);
    }
    // Input that ends (a script's, /dev/null) is not asked on: one question, then why it stopped.
    const empty = await init(join(tempDir(), 'empty'), []);
    expect(empty.code).toBe(2);
    expect(empty.stdout).toBe(
      'Adapter (openai, anthropic, ollama) [openai]: \n  the input ended: the rest is taken from the flags and the defaults\n',
    );
    expect(empty.stderr).toContain('a model name is needed (--model NAME): the input ended before one was given');
  });

  it('takes a server address without a scheme as http://, says so, and refuses one that is still no http(s) URL', async () => {
    const llm = await startLlmServer([{ text: 'ready' }, { text: 'ready' }], { models: ['m'] });
    daemons.onCleanup(() => llm.close());
    // 127.0.0.1:PORT/v1, as an OpenAI-compatible server's address is often written.
    const bare = llm.baseUrl('openai').replace(/^http:\/\//, '');
    const dir = join(tempDir(), 'data');
    const done = await init(dir, [], ['--adapter', 'openai', '--url', bare, '--model', 'm']);
    expect(done.code, done.stderr).toBe(0);
    // No terminal, and the flags name the server and the model: nothing is asked, the rest is the defaults.
    expect(done.stdout).not.toContain('Environment variable holding its API key');
    expect(done.stdout).not.toContain('the input ended');
    expect(done.stdout).toContain(`no scheme in '${bare}': assuming http://${bare}`);
    expect(done.stdout).toContain('it answered: "ready"');
    const sources = () => JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).llm.sources;
    expect(sources()[0].baseUrl).toBe(`http://${bare}`);

    // Typed at the question, localhost:PORT is read the same way (nothing listens there: the probe
    // says so, and the source that answered is kept rather than replaced by one that did not).
    const typed = await init(dir, ['ollama', 'localhost:9', '', 'm'], ['--force']);
    expect(typed.code).toBe(1);
    expect(typed.stdout).toContain("no scheme in 'localhost:9': assuming http://localhost:9");
    expect(typed.stdout).toContain('Kept the sources');
    expect(sources()[0].baseUrl).toBe(`http://${bare}`);

    // What is still no http(s) URL is refused, naming it, with an example; never a stack trace.
    // A refused init makes no data dir.
    const refusedDir = join(tempDir(), 'refused');
    for (const given of ['localhost', 'ftp://127.0.0.1:21', 'http:/x']) {
      const refused = await init(refusedDir, [], ['--adapter', 'openai', '--url', given, '--model', 'm']);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`'${given}' is not an http(s) URL`);
      expect(refused.stderr).toContain('e.g. http://127.0.0.1:8000/v1');
      expect(hasNoStackTrace(refused.stderr)).toBe(true);
    }
    expect(existsSync(refusedDir)).toBe(false);
    // A key pasted where the URL goes is not repeated back.
    const key = 'sk-ant-api03-SECRETSECRETSECRET';
    const pasted = await init(refusedDir, [], ['--adapter', 'openai', '--url', key, '--model', 'm']);
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain(`the server URL given (${key.length} characters) is not an http(s) URL`);
    expect(pasted.stderr).not.toContain('SECRET');
    // At the question, it is asked again with the same words.
    const again = await init(join(tempDir(), 'asked'), ['openai', 'localhost', `${bare}`, '', 'm']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("'localhost' is not an http(s) URL");
    // A value carrying credentials is refused without being repeated.
    const secret = await init(join(tempDir(), 'secret'), [], ['--adapter', 'openai', '--url', 'me:sk-x@127.0.0.1:9/v1', '--model', 'm']);
    expect(secret.code).toBe(2);
    expect(secret.stderr).not.toContain('sk-x');
  });

  it('run while homed runs on the data dir, says to restart it to use the new model', async () => {
    const llm = await startLlmServer([{ text: 'ready' }], { models: ['m'] });
    daemons.onCleanup(() => llm.close());
    const dir = join(tempDir(), 'data');
    const daemon = await daemons.start(dir);
    const done = await init(dir, [], ['--adapter', 'openai', '--url', llm.url, '--model', 'm']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`homed is running on this data dir (pid ${daemon.process.pid}) with the model it started with: stop it`);
    await daemons.stop(daemon);
  });
});
