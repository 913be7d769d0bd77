/**
 * fast-check commands that drive an in-process daemon the way its users and its world do:
 * messages and stops over the cli socket, a client hanging up, a plugin's interrupts, model
 * calls answered (streamed text, tool calls, failures), tool calls answered, time passing,
 * restarts and crashes. Each waits until the daemon is quiet again; the model only mirrors
 * what the daemon then holds, so a command is picked only where it can act.
 */
import fc from 'fast-check';
import type { ToolCall } from '../../adapters/llm/llmTypes.ts';
import { settle } from './daemonQuiescence.ts';
import type { InProcessDaemon } from './inProcessDaemon.ts';
import { PROBE_TOOL } from './probePlugin.ts';

/** What the daemon holds that a command can act on, as seen after the last command. */
export type DaemonModel = { modelCalls: number; toolCalls: number; waitingSessions: number };

export const emptyDaemonModel = (): DaemonModel => ({ modelCalls: 0, toolCalls: 0, waitingSessions: 0 });

const observe = (model: DaemonModel, daemon: InProcessDaemon): void => {
  model.modelCalls = daemon.gate.held.length;
  model.toolCalls = daemon.probe.held.length;
  model.waitingSessions = daemon.waitingSessions.length;
};

type DaemonCommand = fc.AsyncCommand<DaemonModel, InProcessDaemon>;

const command = (
  name: string,
  act: (daemon: InProcessDaemon) => unknown,
  check: (model: DaemonModel) => boolean = () => true,
): DaemonCommand => ({
  check: (model) => check(model),
  run: async (model, daemon) => {
    await daemon.recovered();
    await act(daemon);
    await settle(daemon);
    observe(model, daemon);
  },
  toString: () => name,
});

/** A tool the model asks for: the probe's (held until answered), the subprocess's (answers, or dies mid-call), or none that exists. */
export type ToolChoice = 'probe' | 'echo' | 'crash' | 'unknown';

export type ModelAnswer = Readonly<{ pieces: readonly string[]; tools: readonly ToolChoice[] }> | Readonly<{ fails: string }>;

const toolCall = (choice: ToolChoice, id: string): ToolCall => {
  switch (choice) {
    case 'probe':
      return { id, name: PROBE_TOOL, arguments: {} };
    case 'echo':
      return { id, name: 'fragile_echo', arguments: { text: id } };
    case 'crash':
      return { id, name: 'fragile_echo', arguments: { text: id, crash: true } };
    case 'unknown':
      return { id, name: 'nowhere_tool', arguments: {} };
  }
};

const answerText = (answer: ModelAnswer): string => {
  if ('fails' in answer) return `fails "${answer.fails}"`;
  const text = answer.pieces.map((p) => JSON.stringify(p)).join('+');
  return answer.tools.length === 0 ? text : `${text || '""'} then ${answer.tools.join(', ')}`;
};

const answerCall = (daemon: InProcessDaemon, k: number, answer: ModelAnswer): void => {
  const held = daemon.gate.held;
  const call = held[k % held.length]!;
  if ('fails' in answer) return daemon.gate.fail(call.id, answer.fails);
  for (const piece of answer.pieces) daemon.gate.piece(call.id, piece);
  daemon.gate.finish(
    call.id,
    answer.tools.map((choice, i) => toolCall(choice, `call-${call.id}-${i}`)),
  );
};

const hasModelCall = (model: DaemonModel) => model.modelCalls > 0;

const words = fc.constantFrom('hi', 'what time is it', '你好', 'tell me more', 'and then?');
const pieces = fc.array(fc.constantFrom('Hel', 'lo', ' world', '!', '你好', ' 🙂'), { minLength: 1, maxLength: 3 });

const modelAnswer: fc.Arbitrary<ModelAnswer> = fc.oneof(
  { weight: 3, arbitrary: pieces.map((p) => ({ pieces: p, tools: [] })) },
  {
    weight: 3,
    arbitrary: fc.record({
      pieces: fc.oneof(fc.constant([]), pieces),
      tools: fc.array(fc.constantFrom<ToolChoice>('probe', 'echo', 'crash', 'unknown'), { minLength: 1, maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom('rate limited', 'connection reset').map((fails) => ({ fails })) },
);

const ask = words.map((text) => command(`Ask(${JSON.stringify(text)})`, (d) => d.ask(text)));
const interrupt = words.map((text) => command(`Interrupt(${JSON.stringify(text)})`, (d) => d.interrupt(text)));
const pressStop = fc.constant(command('Stop', (d) => d.pressStop()));
const leave = fc.nat(3).map((k) =>
  command(
    `Leave(${k})`,
    (d) => d.waitingSessions[k % d.waitingSessions.length]?.leave(),
    (m) => m.waitingSessions > 0,
  ),
);
const stream = fc.tuple(fc.nat(3), fc.constantFrom('Hel', 'lo', '你', '好')).map(([k, piece]) =>
  command(
    `Stream(${k}, ${JSON.stringify(piece)})`,
    (d) => {
      const held = d.gate.held;
      d.gate.piece(held[k % held.length]!.id, piece);
    },
    hasModelCall,
  ),
);
const answer = fc
  .tuple(fc.nat(3), modelAnswer)
  .map(([k, a]) => command(`Answer(${k}, ${answerText(a)})`, (d) => answerCall(d, k, a), hasModelCall));
const answerTool = fc.nat(3).map((k) =>
  command(
    `AnswerTool(${k})`,
    (d) => {
      const held = d.probe.held;
      held[k % held.length]!.answer(`waited ${k}`);
    },
    (m) => m.toolCalls > 0,
  ),
);
const wait = fc.constantFrom(500, 2_100, 3_100).map((ms) => command(`Wait(${ms} ms)`, (d) => d.time.advance(ms)));
const restart = fc.constant(command('Restart', (d) => d.restart()));
const crash = fc.constant(command('Crash', (d) => d.crash()));
const crashWhileAnswering = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.nat(3), modelAnswer).map(([events, k, a]) =>
  command(
    `Crash ${events} event(s) into Answer(${k}, ${answerText(a)})`,
    async (d) => {
      const armed = await d.crashAfter(events);
      answerCall(d, k, a);
      await settle(d);
      if (!(await armed.disarm())) d.crash(); // the answer caused fewer events: the crash comes once it is quiet
    },
    hasModelCall,
  ),
);

/** Every command, weighted by how often a session meets it. */
export const daemonCommand: fc.Arbitrary<DaemonCommand> = fc.oneof(
  { weight: 4, arbitrary: ask },
  { weight: 5, arbitrary: answer },
  { weight: 2, arbitrary: stream },
  { weight: 3, arbitrary: answerTool },
  { weight: 2, arbitrary: interrupt },
  { weight: 1, arbitrary: pressStop },
  { weight: 1, arbitrary: leave },
  { weight: 1, arbitrary: wait },
  { weight: 1, arbitrary: restart },
  { weight: 1, arbitrary: crash },
  { weight: 1, arbitrary: crashWhileAnswering },
);
