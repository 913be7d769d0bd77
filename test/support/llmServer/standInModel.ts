/**
 * `npm run stand-in-model [-- --port N]`: the test suite's LLM server as a stand-in model, for
 * trying homed where no model is at hand. OpenAI-compatible on http://127.0.0.1:PORT/v1, model
 * `stand-in`. It says back what it is told; asked to remind you ("remind me in 2 minutes to
 * stretch") it sets a timer with the timer tool and, when the timer fires, says the reminder;
 * told to call a tool ("call weather_now with city=Paris", or with a JSON object) it calls that
 * tool, your plugin's too, and says what the tool answered, a refusal as a refusal; asked for
 * something long ("tell me a long story") it streams slowly, so /stop has something to stop. It
 * knows nothing: a real model is set up the same way (`homed init`).
 */
import { parseArgs } from 'node:util';
import { afterToolResult, lastUserText, type RecordedRequest, type ScriptedReply, startLlmServer } from './index.ts';
import { messagesOf } from './recordedMessages.ts';

const HELP = `Usage: npm run stand-in-model [-- --port N]

A stand-in model for trying homed offline: it says back what it is told, sets reminders ("remind
me in 2 minutes to stretch"), calls a tool you name ("call weather_now with city=Paris days=2",
or "call weather_now with {"city": "Paris"}") and says what it answered, and tells a slow long
story ("tell me a long story"). Then, in another terminal:
  npx homed init --adapter openai --url http://127.0.0.1:PORT/v1 --model stand-in
  npm start`;

const DEFAULT_PORT = 8123;
const UNITS: Readonly<Record<string, number>> = { second: 1, minute: 60, hour: 3600 };
const REMIND = /remind me in (\d+(?:\.\d+)?)\s*(second|minute|hour)s?\s*(?:to\s+)?(.*)/i;
const FIRED = /^Timer \S+ fired: (.*)$/s;

const CALL = /\bcall ([A-Za-z][A-Za-z0-9_-]*)(?:\s+with\s+([\s\S]*))?$/i;
const REFUSED = 'Refused by the security firewall: ';

/** A value as typed after `key=`: a number or true/false as such, else the text (quotes around it left out). */
const typed = (value: string): unknown => {
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return value.replace(/^(["'])([\s\S]*)\1$/, '$2');
};

/** The arguments after "with": a JSON object, or key=value pairs (a value with spaces in quotes). */
const argumentsOf = (given: string | undefined): Record<string, unknown> | string => {
  const text = given?.trim() ?? '';
  if (text === '') return {};
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // said back below
    }
    return `the arguments after "with" are not a JSON object: ${text.slice(0, 200)}`;
  }
  const pairs = [...text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|\S+)/g)];
  if (pairs.length === 0) return `write the arguments as key=value pairs or a JSON object, not: ${text.slice(0, 200)}`;
  return Object.fromEntries(pairs.map(([, key, value]) => [key!, typed(value!)]));
};

/** The name of the tool the last call was of, and what it answered. */
const lastToolResult = (request: RecordedRequest): Readonly<{ tool: string; content: string }> => {
  const messages = messagesOf(request);
  const calls = (messages.findLast((m) => m.role === 'assistant') as { tool_calls?: { function?: { name?: string } }[] } | undefined)
    ?.tool_calls;
  const content = messages.at(-1)?.content;
  return { tool: calls?.[0]?.function?.name ?? 'the tool', content: typeof content === 'string' ? content : JSON.stringify(content) };
};

/** What it says once a tool answered: a reminder set as such, a refusal as a refusal, else what the tool said. */
const afterTool = (request: RecordedRequest): ScriptedReply => {
  const { tool, content } = lastToolResult(request);
  if (content.startsWith(REFUSED)) return { text: `The call of ${tool} was refused: ${content.slice(REFUSED.length)}` };
  if (tool === 'timer_set' && !/^(error|failed)/i.test(content)) return { text: 'Done: I will remind you.' };
  return { text: `${tool} answered: ${content.slice(0, 2_000)}` };
};

const reply = (request: RecordedRequest): ScriptedReply => {
  const said = lastUserText(request);
  if (afterToolResult(request)) return afterTool(request);
  const fired = FIRED.exec(said.trim());
  if (fired) return { text: `Reminder: ${fired[1]}` };
  const remind = REMIND.exec(said);
  if (remind) {
    const seconds = Number(remind[1]) * UNITS[remind[2]!.toLowerCase()]!;
    return { toolCalls: [{ name: 'timer_set', arguments: { seconds, note: remind[3]?.trim() || 'your reminder' } }] };
  }
  const call = CALL.exec(said.trim());
  if (call) {
    const args = argumentsOf(call[2]);
    return typeof args === 'string' ? { text: `I cannot call ${call[1]}: ${args}` } : { toolCalls: [{ name: call[1]!, arguments: args }] };
  }
  if (/\blong\b/i.test(said)) {
    // About 5 s to tell, a line at a time.
    const lines = Array.from({ length: 40 }, (_, i) => `and then step ${i + 1} of the long story happened, `);
    return { text: `${lines.join('')}the end.`, pieces: [...lines, 'the end.'], slow: { chunkDelayMs: 120 } };
  }
  return { text: `You said: ${said.slice(0, 500)}` };
};

const { values } = parseArgs({ options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`--port must be a whole number from 0 to 65535, got '${values.port}'`);
  process.exit(2);
}
try {
  const server = await startLlmServer([{ when: () => true, reply, repeat: true }], { port, models: ['stand-in'] });
  console.log(`stand-in model on ${server.baseUrl('openai')} (model stand-in); Ctrl-C stops it`);
  console.log(`set it up with: npx homed init --adapter openai --url ${server.baseUrl('openai')} --model stand-in`);
  process.on('SIGINT', () => void server.close().then(() => process.exit(0)));
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  console.error(
    code === 'EADDRINUSE'
      ? `port ${port} is taken; pass another: npm run stand-in-model -- --port N`
      : `cannot start: ${(error as Error).message}`,
  );
  process.exit(1);
}
