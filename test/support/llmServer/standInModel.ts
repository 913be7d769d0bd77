/**
 * `npm run stand-in-model [-- --port N]`: the test suite's LLM server as a stand-in model, for
 * trying homed where no model is at hand. OpenAI-compatible on http://127.0.0.1:PORT/v1, model
 * `stand-in`. It says back what it is told; asked to remind you ("remind me in 2 minutes to
 * stretch") it sets a timer with the timer tool and, when the timer fires, says the reminder;
 * asked for something long ("tell me a long story") it streams slowly, so /stop has something
 * to stop. It knows nothing: a real model is set up the same way (`homed init`).
 */
import { parseArgs } from 'node:util';
import { afterToolResult, lastUserText, type RecordedRequest, type ScriptedReply, startLlmServer } from './index.ts';

const HELP = `Usage: npm run stand-in-model [-- --port N]

A stand-in model for trying homed offline (it says back what it is told, sets reminders, tells a
slow long story). Then, in another terminal:
  npx homed init --adapter openai --url http://127.0.0.1:PORT/v1 --model stand-in
  npm start`;

const DEFAULT_PORT = 8123;
const UNITS: Readonly<Record<string, number>> = { second: 1, minute: 60, hour: 3600 };
const REMIND = /remind me in (\d+(?:\.\d+)?)\s*(second|minute|hour)s?\s*(?:to\s+)?(.*)/i;
const FIRED = /^Timer \S+ fired: (.*)$/s;

const reply = (request: RecordedRequest): ScriptedReply => {
  const said = lastUserText(request);
  if (afterToolResult(request)) return { text: 'Done: I will remind you.' };
  const fired = FIRED.exec(said.trim());
  if (fired) return { text: `Reminder: ${fired[1]}` };
  const remind = REMIND.exec(said);
  if (remind) {
    const seconds = Number(remind[1]) * UNITS[remind[2]!.toLowerCase()]!;
    return { toolCalls: [{ name: 'timer_set', arguments: { seconds, note: remind[3]?.trim() || 'your reminder' } }] };
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
