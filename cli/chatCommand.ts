/**
 * `homed chat`: runs one turn against the LLM sources given on the command line, streams the
 * reply to stdout, and journals the turn in the data dir's log (it replays like any other).
 */
import { join } from 'node:path';
import type { HttpProvider } from '../adapters/llm/httpProvider.ts';
import { BUILTIN_ADAPTERS } from '../adapters/llm/luaAdapter.ts';
import { InvalidLlmSource, providerFor, sourceFromFlag, sourcesFromSettings } from '../actors/llm/llmSources.ts';
import { ProviderChain } from '../actors/llm/providerChain.ts';
import { openRefusalJournal } from '../actors/llm/refusalJournal.ts';
import { loadSettings, SETTINGS_FILE } from '../actors/modules/config.ts';
import { TURN_STREAM_PREFIX } from '../events/index.ts';
import { DEFAULT_MAX_ROUNDS, EMPTY_TOOLSET } from '../machines/turn/index.ts';
import { randomIds, systemClock, systemTimers } from '../actors/clock/systemClock.ts';
import { emptyOutputState, foldOutput, type Delivery } from '../actors/output/outputDeliveries.ts';
import { TurnActor } from '../actors/turn/turnActor.ts';
import { modelEffects } from '../actors/turn/turnEffects.ts';
import { ToolsetLedger } from '../actors/turn/toolsets.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import type { CommandOutput } from './commandOutput.ts';
import { defaultDataDir, EVENT_LOG_FILE, openEventLog, prepareDataDir } from './dataDir.ts';
import { describeHolder, lockDataDir } from './dataDirLock.ts';

export const CHAT_HELP = `Usage: homed chat [--data DIR] [--llm ADAPTER=URL ...] [--model NAME] [--system TEXT] [--max-rounds N] "message"

Runs one turn: the message goes to the model, the reply streams to stdout, and the whole
turn is journaled in the data dir's log (homed replay --verify replays it without the model).
  --llm ADAPTER=URL  an LLM source, tried in the order given; ADAPTER is one of
                     ${BUILTIN_ADAPTERS.join(', ')} (openai also serves vLLM, llama.cpp server,
                     LM Studio): e.g. --llm openai=http://127.0.0.1:8000/v1
                     --llm ollama=http://127.0.0.1:11434. Its key is read from the environment
                     variable ADAPTER_API_KEY (OPENAI_API_KEY, ANTHROPIC_API_KEY), never printed.
                     Without --llm, the sources of DIR/settings.json are used:
                     {"llm": {"sources": [{"name": "local", "adapter": "ollama",
                       "baseUrl": "http://127.0.0.1:11434", "model": "qwen2.5",
                       "apiKeyEnv": "MY_KEY", "contextWindow": 32768}]}}
                     ("apiKey" may stand in the file instead of "apiKeyEnv"; it is never printed).
  --model NAME       the model to ask (overrides each source's "model")
  --system TEXT      a system prompt
  --max-rounds N     tool rounds before the turn gives up (default 8)
Ctrl-C stops the turn (recorded as a stop): the HTTP request is aborted at once.
`;

export const chatCommand = async (args: string[], output: CommandOutput): Promise<number> => {
  const write = output.line;
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
  if (positionals.length !== 1 || positionals[0]!.trim() === '') throw new UsageError('give the message as one argument (quote it)');
  const maxRounds = positiveInteger('max-rounds', values['max-rounds']);
  const flagged = (values.llm ?? []).map((spec, i) => {
    try {
      return sourceFromFlag(spec, i);
    } catch (error) {
      throw error instanceof InvalidLlmSource ? new UsageError(error.message) : error;
    }
  });
  const dir = prepareDataDir(values.data ?? defaultDataDir());
  const specs = flagged.length > 0 ? flagged : sourcesFromSettings(loadSettings(dir));
  if (specs.length === 0) {
    throw new UsageError(`no LLM source: pass --llm ADAPTER=URL, or add llm.sources to ${join(dir, SETTINGS_FILE)}`);
  }
  const sources = specs.map((spec) => providerFor(spec, values.model));
  // The turn is appended to the log: only while no daemon (or other writer) holds the dir.
  const lock = lockDataDir(
    dir,
    'homed chat',
    (holder) =>
      `the data dir ${dir} is in use by ${describeHolder(holder)}, and chat would append to its log; ` +
      `talk to the running daemon with waiter (waiter --data ${dir} "message"), or stop it first`,
  );
  try {
    return await chatLocked(dir, sources, values, positionals[0]!, maxRounds, output);
  } finally {
    lock.release();
  }
};

const chatLocked = async (
  dir: string,
  sources: readonly HttpProvider[],
  values: Readonly<{ model?: string; system?: string }>,
  input: string,
  maxRounds: number | undefined,
  output: CommandOutput,
): Promise<number> => {
  const store = openEventLog(join(dir, EVENT_LOG_FILE));
  const stream = `${TURN_STREAM_PREFIX}${randomIds.next()}`;
  const deliveries = emptyOutputState();
  deliveries.streamRoutes.set(stream, { channel: 'stdout', target: null });
  let ended: Delivery | undefined;
  let printed = false;
  let turn: TurnActor | undefined;
  const onSigint = () => void turn?.stop('stop').catch(() => undefined);
  // What is printed comes from the log, as a channel would get it.
  const subscription = store.subscribe({
    afterSeq: await store.headSeq(),
    handler: (events) => {
      for (const event of events) {
        for (const delivery of foldOutput(deliveries, event)) {
          if (delivery.kind === 'chunk') {
            printed = true;
            try {
              output.write(delivery.text);
            } catch {
              onSigint(); // nobody reads the reply any more: stop the turn, as Ctrl-C does
            }
          } else if (delivery.kind === 'end') ended = delivery;
        }
      }
    },
  });
  turn = new TurnActor({
    store,
    stream,
    toolset: EMPTY_TOOLSET,
    effects: {
      ...modelEffects({
        chain: new ProviderChain(sources, await openRefusalJournal(store, systemClock)),
        model: values.model ?? sources[0]!.model,
      }),
      callTool: async (call) => ({ content: `tool '${call.name}' is not available in homed chat`, isError: true }),
      runHandler: async () => null,
    },
    clock: systemClock,
    timers: systemTimers,
  });
  process.once('SIGINT', onSigint);
  try {
    await turn.start({
      turnId: stream.slice(TURN_STREAM_PREFIX.length),
      input,
      model: values.model ?? sources[0]!.model,
      maxRounds: maxRounds ?? DEFAULT_MAX_ROUNDS,
      ...(values.system ? { systemPrompt: values.system } : {}),
      toolset: await new ToolsetLedger(store).record(EMPTY_TOOLSET),
    });
    const outcome = await turn.done;
    await turn.settled();
    await subscription.caughtUp(await store.headSeq());
    if (outcome === 'failed') {
      process.stderr.write(`${printed ? '\n' : ''}homed: ${ended?.text ?? 'the turn failed'}\n`);
      return 1;
    }
    if (outcome === 'cancelled') {
      process.stderr.write('\nhomed: stopped\n');
      return 130;
    }
    if (printed) output.write('\n');
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    turn.close();
    await subscription.stop();
    await store.close();
  }
};
