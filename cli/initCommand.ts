/**
 * `homed init`: the first run. Asks for the model server (adapter, URL, model, the environment
 * variable holding a key), probes it (its models, one tiny request), writes the source into the
 * data dir's settings.json (keeping every other setting), and says what to run next. Each
 * answer can be given as a flag instead; with all of them it asks nothing.
 */
import { readPlacedFile } from '../adapters/files/privateFiles.ts';
import { LOCK_FILE } from './dataDirLock.ts';
import { lockHolderPid } from './lockHolder.ts';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { BUILTIN_ADAPTERS } from '../adapters/llm/luaAdapter.ts';
import { SETTINGS_FILE } from '../actors/modules/config.ts';
import { checkSettings } from '../actors/settings/checkSettings.ts';
import { SETTINGS_SCHEMA } from '../actors/settings/settingsSchema.ts';
import { writeFileAtomic } from '../plugins/builtin/shared/writeFileAtomic.ts';
import { parse } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { dataDirFrom, prepareDataDir } from './dataDir.ts';
import { refuseNonDirectory } from './dataDirKind.ts';
import { serverUrlFrom } from './serverUrl.ts';
import { shellWord } from './shellWords.ts';
import { listModels, probeModel } from '../adapters/llm/modelProbe.ts';

export const INIT_HELP = `Usage: homed init [--data DIR] [--adapter A] [--url URL] [--model NAME] [--key-env VAR] [--context-window N] [--force]

Sets up the model the daemon talks to: asks what it is given no flag for, probes the server
(the models it lists, one tiny request), and writes the source to DIR/settings.json, keeping
every other setting there.
  --adapter A         ${BUILTIN_ADAPTERS.join(', ')} (openai also serves vLLM, llama.cpp server, LM Studio)
  --url URL           e.g. http://127.0.0.1:8000/v1 (OpenAI-compatible) or http://127.0.0.1:11434 (Ollama);
                      a bare host:port (127.0.0.1:8000/v1) is taken as http://
  --model NAME        the model's name on that server
  --key-env VAR       the environment variable holding its API key (the key itself is never written)
  --context-window N  tokens the model can read at once (asked when not given; 8192 if you just press Enter)
  --force             replace the sources settings.json already has (kept when the new one's test request fails)
`;

type Asker = (question: string, fallback?: string) => Promise<string>;

const DEFAULT_CONTEXT_WINDOW = 8_192;

/** A context window as typed, or undefined when it is no whole number of at least 1. */
const contextWindowOf = (text: string): number | undefined => {
  const n = Number(text);
  return /^\d+$/.test(text.trim()) && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
};

const DEFAULT_URLS: Readonly<Record<string, string>> = {
  openai: 'http://127.0.0.1:8000/v1',
  ollama: 'http://127.0.0.1:11434',
  anthropic: 'https://api.anthropic.com',
};

const readSettings = (path: string): Record<string, unknown> => {
  const read = readPlacedFile(path, (why) => new UsageError(`${why}; remove it, then run homed init again`));
  if (read === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(read.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new UsageError(`${path} is not a JSON object of settings; fix or remove it, then run homed init again`);
};

export const initCommand = async (args: string[], write: (line: string) => void): Promise<number> => {
  const { values } = parse(args, {
    data: { type: 'string' },
    adapter: { type: 'string' },
    url: { type: 'string' },
    model: { type: 'string' },
    'key-env': { type: 'string' },
    'context-window': { type: 'string' },
    force: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    write(INIT_HELP);
    return 0;
  }
  const dir = dataDirFrom(values.data);
  // Made only once there is something to write: a refused init leaves no empty data dir behind.
  refuseNonDirectory(resolve(dir));
  const settingsPath = join(dir, SETTINGS_FILE);
  const settings = readSettings(settingsPath);
  const llm = (settings.llm ?? {}) as Record<string, unknown>;
  if (Array.isArray(llm.sources) && llm.sources.length > 0 && !values.force) {
    throw new UsageError(`${settingsPath} already has llm.sources; pass --force to replace them, or edit the file`);
  }

  // Checked before anything is asked, by the rule settings.json has for it.
  const windowGiven = values['context-window'];
  if (windowGiven !== undefined && contextWindowOf(windowGiven) === undefined) {
    throw new UsageError(`--context-window must be a whole number of at least 1 (tokens), got '${windowGiven}'`);
  }
  const hadSources = Array.isArray(llm.sources) && llm.sources.length > 0;

  const lines = createInterface({ input: process.stdin, terminal: false });
  const answers = lines[Symbol.asyncIterator]();
  // Once the input has ended (a script's, or /dev/null), what is left is taken as if Enter were pressed, unasked; so
  // it is from the start when no person is there to ask and the flags name the server and the model.
  let ended = !process.stdin.isTTY && values.adapter !== undefined && values.url !== undefined && values.model !== undefined;
  const ask: Asker = async (question, fallback) => {
    if (ended) return fallback || '';
    process.stdout.write(`${question}${fallback ? ` [${fallback}]` : ''}: `);
    const next = await answers.next();
    if (next.done) {
      ended = true;
      process.stdout.write('\n  the input ended: the rest is taken from the flags and the defaults\n');
    }
    return (next.done ? '' : String(next.value).trim()) || fallback || '';
  };
  try {
    let adapter = values.adapter ?? (await ask(`Adapter (${BUILTIN_ADAPTERS.join(', ')})`, 'openai'));
    while (!(BUILTIN_ADAPTERS as readonly string[]).includes(adapter)) {
      if (values.adapter) throw new UsageError(`--adapter must be one of ${BUILTIN_ADAPTERS.join(', ')}, got '${adapter}'`);
      adapter = await ask(`'${adapter}' is not one of ${BUILTIN_ADAPTERS.join(', ')}; adapter`, 'openai');
    }
    const example = DEFAULT_URLS[adapter] ?? DEFAULT_URLS.openai!;
    let server = serverUrlFrom(values.url ?? (await ask('Server URL', DEFAULT_URLS[adapter])), example);
    while ('problem' in server) {
      if (values.url) throw new UsageError(`--url: ${server.problem}`);
      server = serverUrlFrom(await ask(`${server.problem}; server URL`, DEFAULT_URLS[adapter]), example);
    }
    const { url } = server;
    if (server.assumedHttp) write(`  no scheme in '${url.slice('http://'.length)}': assuming ${url}`);
    const keyEnv = values['key-env'] ?? ((await ask('Environment variable holding its API key (empty for none)', '')) || undefined);
    const apiKey = keyEnv ? process.env[keyEnv] : undefined;
    const start = values.data === undefined ? 'npm start' : `npx homed --data ${shellWord(dir)}`;
    if (keyEnv && apiKey === undefined) write(`note: ${keyEnv} is not set in this shell; set it before ${start}`);
    // Asked for a model, the server's list comes first, so the name is picked from it.
    const served = values.model === undefined ? await listModels(adapter, url, apiKey).catch(() => undefined) : undefined;
    if (served !== undefined && served.length > 0) write(`  it serves ${served.length} model(s): ${served.slice(0, 10).join(', ')}`);
    const model = values.model ?? (await ask('Model', served?.[0]));
    if (!model) throw new UsageError(`a model name is needed (--model NAME)${ended ? ': the input ended before one was given' : ''}`);
    let contextWindow = windowGiven === undefined ? undefined : contextWindowOf(windowGiven);
    while (contextWindow === undefined) {
      const answer = await ask(
        'Context window: tokens the model reads at once (its card says; too small and long talks lose more than they need to)',
        `${DEFAULT_CONTEXT_WINDOW}`,
      );
      contextWindow = contextWindowOf(answer);
      if (contextWindow === undefined) write(`  '${answer}' is not a whole number of at least 1`);
    }

    write(`Asking ${url} ...`);
    const probe = await probeModel({ adapter, baseUrl: url, model, ...(apiKey ? { apiKey } : {}) }, served);
    if (!probe.models) write(`  it did not list its models (${probe.listError})`);
    else if (served === undefined)
      write(`  it serves ${probe.models.length} model(s)${probe.models.length ? `: ${probe.models.slice(0, 10).join(', ')}` : ''}`);
    if (probe.models && probe.models.length > 0 && !probe.models.includes(model)) write(`  note: '${model}' is not among them`);
    if (probe.error !== undefined) write(`  a test request failed: ${probe.error}`);
    else write(`  it answered: ${JSON.stringify(probe.answer)}`);

    const source = { name: 'local', adapter, baseUrl: url, model, contextWindow, ...(keyEnv ? { apiKeyEnv: keyEnv } : {}) };
    const next = { ...settings, llm: { ...llm, sources: [source] } };
    const problems = checkSettings(next, SETTINGS_SCHEMA);
    if (problems.length > 0) throw new UsageError(problems.map((p) => `${p.key}: ${p.problem}`).join('; '));
    if (probe.error !== undefined && hadSources) {
      // A source that works is not replaced by one that did not answer (a mistyped URL would break the next start).
      write(
        `Kept the sources ${settingsPath} has: nothing was written. Fix what the test request said (or start the server), then run homed init --force again.`,
      );
      return 1;
    }
    prepareDataDir(dir);
    await writeFileAtomic(settingsPath, `${JSON.stringify(next, null, 2)}\n`);
    write(`Wrote ${settingsPath}.`);
    const running = lockHolderPid(join(dir, LOCK_FILE));
    const waiter = values.data === undefined ? 'npx waiter "hello"' : `npx waiter --data ${shellWord(dir)} "hello"`;
    write(
      running !== undefined
        ? `homed is running on this data dir (pid ${running}) with the model it started with: stop it (Ctrl-C, or kill -TERM ${running}) and run ${start} again to use this one`
        : probe.error === undefined
          ? `Next: ${start}, then in another terminal: ${waiter}`
          : `Written anyway, for a server not started yet. Fix what the test request said (or start the server), then: ${start}; ` +
            `to give another URL or model instead, run homed init --force`,
    );
    return probe.error === undefined ? 0 : 1;
  } finally {
    lines.close();
  }
};
