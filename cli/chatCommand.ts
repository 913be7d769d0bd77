/**
 * `homed chat`: one message, the same turn a daemon runs (its system prompt, tools and
 * memory). Through the daemon when one answers on the data dir's cli socket; otherwise in the
 * daemon's kernel booted in this process for the one message, under the data dir's lock. The
 * reply streams to stdout either way, and the turn is journaled in the data dir's log.
 */
import { join } from 'node:path';
import { BUILTIN_ADAPTERS } from '../adapters/llm/luaAdapter.ts';
import { SecretVault } from '../adapters/secrets/secretVault.ts';
import { InvalidLlmSource, llmFacilityFrom, sourceSettingFromFlag } from '../actors/llm/llmSources.ts';
import { loadSettings, SETTINGS_FILE, type Settings } from '../actors/modules/config.ts';
import { checkSettings } from '../actors/settings/checkSettings.ts';
import { SETTINGS_SCHEMA } from '../actors/settings/settingsSchema.ts';
import { HologramError } from '../events/index.ts';
import { parse, positiveInteger } from './args.ts';
import { chatOver } from './chatConversation.ts';
import { CHAT_COMMAND, chatInProcess } from './chatInProcess.ts';
import { CliClient } from './cliClient.ts';
import { UsageError } from './cliErrors.ts';
import type { CommandOutput } from './commandOutput.ts';
import { DaemonNotRunning } from './daemonErrors.ts';
import { dataDirFrom, existingDataDir, prepareDataDir } from './dataDir.ts';
import { DataDirInUse, describeHolder, holderOf } from './dataDirLock.ts';
import { withDataDir } from './shellWords.ts';

export const CHAT_HELP = `Usage: homed chat [--data DIR] [--llm ADAPTER=URL ...] [--model NAME] [--system TEXT] [--max-rounds N] message ...

Sends one message and streams the reply to stdout. It is the turn the daemon runs: its system
prompt (the persona, the date and time), the plugins' tools, and the memory of your
conversation (the one waiter's messages join too). The turn is journaled in the data dir's log
(homed replay --verify replays it without the model).

With a daemon running on DIR, the message goes through it, as with waiter "message": the
daemon's settings decide, and the flags below are refused. Without one, chat starts the
daemon's kernel in this process for the one message, under the data dir's lock, and stops it in
order after the reply: settings.json, the model sources, the memory, and every plugin the
daemon starts (the built-in ones and those in DIR/plugins, whose processes run while chat
does). The flags then override settings.json for this run only:
  --llm ADAPTER=URL  an LLM source, tried in the order given, instead of llm.sources;
                     ADAPTER is one of ${BUILTIN_ADAPTERS.join(', ')} (openai also serves vLLM,
                     llama.cpp server, LM Studio), with --model to name the model it serves:
                     e.g. --llm openai=http://127.0.0.1:8000/v1 --model qwen2.5-7b, or
                     --llm ollama=http://127.0.0.1:11434 --model qwen2.5. Its key is read from the environment
                     variable ADAPTER_API_KEY (OPENAI_API_KEY, ANTHROPIC_API_KEY), never printed.
                     Without --llm, the sources of DIR/settings.json are used:
                     {"llm": {"sources": [{"name": "local", "adapter": "ollama",
                       "baseUrl": "http://127.0.0.1:11434", "model": "qwen2.5",
                       "apiKeyEnv": "MY_KEY", "contextWindow": 32768}]}}
                     ("apiKey" may stand in the file instead of "apiKeyEnv"; it is never printed).
  --model NAME       the model to ask (llm.model: overrides each source's "model")
  --system TEXT      the persona (llm.systemPrompt; else DIR/persona.md; the date and time follow it)
  --max-rounds N     tool rounds before the turn gives up (llm.maxRounds; default 8)
Ctrl-C stops the turn (recorded as a stop; the HTTP request is aborted at once) and exits 130.
A reply that is not an answer (a failure, the round limit, every tool denied) exits 1, saying
why on stderr, as waiter does.
`;

/** Each flag and the setting it overrides, for errors that name both. */
const FLAG_OF: Readonly<Record<string, string>> = {
  'llm.sources': '--llm',
  'llm.model': '--model',
  'llm.systemPrompt': '--system',
  'llm.maxRounds': '--max-rounds',
};

/** A flag that overrides settings, while a daemon (whose settings decide) answers the message. */
export class ChatFlagRefused extends HologramError {
  readonly code = 'CHAT_FLAG_REFUSED';
}

type ChatFlags = Readonly<{ llm?: string[]; model?: string; system?: string; 'max-rounds'?: string }>;

/** The flags as settings for this run, checked against the settings schema, and the flags that gave them. */
const overridesOf = (values: ChatFlags): Readonly<{ overrides: Settings; flags: readonly string[] }> => {
  const sources = (values.llm ?? []).map((spec, i) => {
    try {
      return sourceSettingFromFlag(spec, i);
    } catch (error) {
      throw error instanceof InvalidLlmSource ? new UsageError(error.message) : error;
    }
  });
  const maxRounds = positiveInteger('max-rounds', values['max-rounds']);
  const llm = {
    ...(sources.length > 0 ? { sources } : {}),
    ...(values.model !== undefined ? { model: values.model } : {}),
    ...(values.system ? { systemPrompt: values.system } : {}),
    ...(maxRounds !== undefined ? { maxRounds } : {}),
  };
  const overrides = Object.keys(llm).length > 0 ? { llm } : {};
  const [problem] = checkSettings(overrides, SETTINGS_SCHEMA);
  if (problem) {
    const key = Object.keys(FLAG_OF).find((k) => problem.key === k || problem.key.startsWith(`${k}[`));
    throw new UsageError(`${key ? `${FLAG_OF[key]} (${problem.key})` : problem.key}: ${problem.problem}`);
  }
  return { overrides, flags: Object.keys(llm).map((key) => FLAG_OF[`llm.${key}`]!) };
};

/**
 * The running daemon's cli socket, or undefined when no daemon listens there. Another
 * `homed chat`'s own kernel is no daemon: it stops once its reply ended, whatever it still serves.
 */
const daemonOn = async (dir: string): Promise<CliClient | undefined> => {
  const client = await CliClient.connect(dir, { forTerminal: Boolean(process.stdout.isTTY) }).catch((error: unknown) => {
    if (error instanceof DaemonNotRunning) return undefined;
    throw error; // a daemon is there, and cannot be reached: say so rather than start a second writer
  });
  const holder = client && holderOf(dir);
  if (client && holder?.command === CHAT_COMMAND) {
    client.close();
    throw new DataDirInUse(
      dir,
      holder,
      `the data dir ${dir} is in use by ${describeHolder(holder)}, which stops once its reply ended; ` +
        'try again then, or start a daemon (homed run) for chats to share',
    );
  }
  return client;
};

export const chatCommand = async (args: string[], output: CommandOutput): Promise<number> => {
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
    output.line(CHAT_HELP);
    return 0;
  }
  // The words of the message, as waiter takes them: `homed chat hello there` sends "hello there".
  const text = positionals.join(' ');
  if (text.trim() === '') throw new UsageError('the message is empty; give the text to send');
  const { overrides, flags } = overridesOf(values);
  // Chat never makes a data dir: a mistyped --data would leave a stray one (and a second memory).
  const dir = existingDataDir(dataDirFrom(values.data));
  const daemon = await daemonOn(dir);
  if (daemon) {
    try {
      if (flags.length > 0) {
        throw new ChatFlagRefused(
          `the data dir ${dir} is in use by ${describeHolder(holderOf(dir))}, so chat sends the message through it and its ` +
            `settings (${join(dir, SETTINGS_FILE)}) decide the turn: ${flags.join(', ')} cannot be used then; ` +
            `drop ${flags.length === 1 ? 'it' : 'them'}, or stop the daemon first`,
        );
      }
      return await chatOver({ client: daemon, text, output, signals: ['SIGINT'] });
    } finally {
      daemon.close();
    }
  }
  prepareDataDir(dir);
  // Before the kernel starts: a chat with no model would only be told so by the turn. A key named
  // by apiKeySecret is read from the vault, as the kernel's security module will read it.
  if ('missing' in llmFacilityFrom(loadSettings(dir, overrides), undefined, (name) => SecretVault.open(dir).get(name))) {
    throw new UsageError(
      `no LLM source (llm.sources in ${join(dir, SETTINGS_FILE)}): pass --llm ADAPTER=URL, or set one up with: ${withDataDir('homed init', dir)}`,
    );
  }
  return chatInProcess({ dir, overrides, text, output });
};
