/**
 * `homed chat`: runs one turn against the LLM sources given on the command line, streams the
 * reply to stdout, and journals the turn in the data dir's log (it replays like any other).
 */
import { join } from 'node:path';
import { HttpProvider } from '../../adapters/llm/httpProvider.ts';
import { BUILTIN_ADAPTERS } from '../../adapters/llm/luaAdapter.ts';
import { ProviderChain } from '../llm/providerChain.ts';
import { runTurn } from '../turn/runTurn.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { defaultDataDir, EVENT_LOG_FILE, openEventLog, prepareDataDir } from './dataDir.ts';

export const CHAT_HELP = `Usage: homed chat [--data DIR] --llm ADAPTER=URL [--llm ...] --model NAME [--system TEXT] [--max-rounds N] "message"

Runs one turn: the message goes to the model, the reply streams to stdout, and the whole
turn is journaled in the data dir's log (homed replay --verify replays it without the model).
  --llm ADAPTER=URL  an LLM source, tried in the order given; ADAPTER is one of
                     ${BUILTIN_ADAPTERS.join(', ')} (openai also serves vLLM, llama.cpp server,
                     LM Studio): e.g. --llm openai=http://127.0.0.1:8000/v1
                     --llm ollama=http://127.0.0.1:11434. Its key is read from the environment
                     variable ADAPTER_API_KEY (OPENAI_API_KEY, ANTHROPIC_API_KEY), never printed.
  --model NAME       the model to ask
  --system TEXT      a system prompt
  --max-rounds N     tool rounds before the turn gives up (default 8)
Ctrl-C stops the turn: the HTTP request is aborted at once.
`;

export const parseSource = (spec: string, index: number) => {
  const at = spec.indexOf('=');
  const adapter = at > 0 ? spec.slice(0, at) : '';
  const baseUrl = spec.slice(at + 1);
  if (!(BUILTIN_ADAPTERS as readonly string[]).includes(adapter)) {
    throw new UsageError(`--llm '${spec}': the adapter must be one of ${BUILTIN_ADAPTERS.join(', ')} (as in openai=http://127.0.0.1:8000/v1)`);
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`--llm '${spec}': '${baseUrl}' is not a URL`);
  }
  const apiKey = process.env[`${adapter.toUpperCase()}_API_KEY`];
  return { name: `${adapter}#${index + 1}`, adapter, baseUrl, ...(apiKey ? { apiKey } : {}) };
};

export const chatCommand = async (args: string[], write: (line: string) => void): Promise<number> => {
  const { values, positionals } = parse(
    args,
    {
      data: { type: 'string' },
      llm: { type: 'string', multiple: true },
      model: { type: 'string' },
      system: { type: 'string' },
      'max-rounds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (values.help) {
    write(CHAT_HELP);
    return 0;
  }
  if (!values.llm || values.llm.length === 0) throw new UsageError('give at least one LLM source with --llm ADAPTER=URL');
  if (!values.model) throw new UsageError('name the model with --model NAME');
  if (positionals.length !== 1 || positionals[0]!.trim() === '') throw new UsageError('give the message as one argument (quote it)');
  const sources = values.llm.map(parseSource).map((s) => new HttpProvider({ ...s, model: values.model! }));
  const maxRounds = positiveInteger('max-rounds', values['max-rounds']);
  const dir = prepareDataDir(values.data ?? defaultDataDir());
  const store = openEventLog(join(dir, EVENT_LOG_FILE));
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  try {
    let streamed = false;
    const { output } = await runTurn({
      store,
      chain: new ProviderChain(sources),
      model: values.model,
      input: positionals[0]!,
      ...(values.system ? { systemPrompt: values.system } : {}),
      ...(maxRounds !== undefined ? { maxRounds } : {}),
      signal: stop.signal,
      onText: (text) => {
        streamed = true;
        process.stdout.write(text);
      },
    });
    if (output.outcome === 'failed') {
      process.stderr.write(`homed: ${output.reply}\n`);
      return 1;
    }
    if (output.outcome === 'cancelled') {
      process.stderr.write('\nhomed: stopped\n');
      return 130;
    }
    // The streamed text is what the model said; the reply is what the turn sent (stages may change it).
    if (!streamed || output.reply !== '') process.stdout.write(streamed ? '\n' : `${output.reply}\n`);
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    await store.close();
  }
};
