/**
 * A plugin floods homed with 300 L3 interrupts and 1,000 inputs at once, then keeps retrying
 * what was refused each time a task completes. What is past its bound is refused with a typed
 * error and never recorded, the flood is recorded once, and the person's message, sent into the
 * flood, is answered while the plugin still has inputs to run: order read from the log, no clock.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_INJECTION_BOUNDS } from '../../plugins/host/injectionBounds.ts';
import { askSocket, type LogLine, logOf, testDataDir, useDaemons, verifyReplay, type RunningDaemon } from '../support/homedSession.ts';
import { lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { waitForLine } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

const { waitingAtMost: WAITING, interruptBurst: BURST, interruptEveryMs: EVERY } = DEFAULT_INJECTION_BOUNDS;

/** The daemon's output up to a line matching `pattern` (it may have come before "homed: ready"). */
const outputUntil = async (daemon: RunningDaemon, pattern: RegExp): Promise<string> =>
  pattern.test(daemon.output) ? daemon.output : daemon.output + (await waitForLine(daemon.process, pattern));

describe('a plugin flooding the scheduler', () => {
  it('is cut at its bound with a typed refusal, recorded once, and the person is answered before its backlog drains', async () => {
    const llm = await startLlmServer([
      { when: (request) => lastUserText(request).includes('person here'), reply: { text: 'Hello, person.' } },
      { when: () => true, reply: { text: 'ok' }, repeat: true },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, plugins: ['spammer'] });
    const daemon = await daemons.start(dir);

    // The flood, as the plugin saw it: the bound admitted, everything else refused with INJECTION_THROTTLED.
    const output = await outputUntil(daemon, /plugin spammer: flood reported\n/);
    expect(output).toContain(
      `plugin spammer: flood settled: accepted ${BURST} interrupts and ${WAITING - BURST} inputs; ` +
        `refused ${300 - BURST} interrupts and ${1_000 - WAITING + BURST} inputs (INJECTION_THROTTLED, typed)`,
    );
    expect(output).toMatch(
      /refused by waiting: plugin 'spammer' already has 32 inputs waiting or running .*wait until some of them are handled/,
    );
    expect(output).toMatch(/refused by interrupts: plugin 'spammer' has used its 8 interrupts and gains one every 10 s/);

    // The person speaks into the flood, and is answered.
    const replies = await askSocket(dir, 'person here: are you there?');
    const personInput = replies.find((r) => r.inputId)?.inputId;
    expect(
      replies
        .filter((r) => r.type === 'chunk')
        .map((r) => r.text)
        .join(''),
    ).toBe('Hello, person.');
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    await daemons.stop(daemon);

    const scheduler = await logOf(dir, '--stream', 'scheduler');
    const queued = scheduler.filter((e) => e.type === 'InputQueued');
    const fromPlugin = new Set(queued.filter((e) => e.data.source === 'spammer').map((e) => e.data.inputId));
    const person = queued.find((e) => e.data.source === 'cli')!;
    expect(person.data.inputId).toBe(personInput);
    const indexOf = (type: string, id: unknown) => scheduler.findIndex((e) => e.type === type && e.data.taskId === id);
    const [arrived, started, done] = [
      scheduler.indexOf(person),
      indexOf('TaskStarted', personInput),
      indexOf('TaskCompleted', personInput),
    ];
    expect(arrived).toBeLessThan(started);

    // The person's message waits at the person's level: ahead of it ran only the plugin's
    // interrupts that were already waiting when it came, none of the plugin's queued inputs.
    const interruptsBefore = new Set(
      scheduler
        .slice(0, arrived)
        .filter((e) => e.type === 'InputQueued' && e.data.source === 'spammer' && e.data.kind === 'interrupt')
        .map((e) => e.data.inputId),
    );
    const ranAhead = scheduler.slice(arrived, started).filter((e) => e.type === 'TaskStarted' && fromPlugin.has(e.data.taskId));
    expect(ranAhead.filter((e) => !interruptsBefore.has(e.data.taskId))).toEqual([]);
    expect(ranAhead.length).toBeLessThanOrEqual(BURST);
    // Interrupts over the whole run: the burst, and one per 10 s of the log's own time.
    const interrupts = queued.filter((e) => e.data.source === 'spammer' && e.data.kind === 'interrupt');
    const span = Number(interrupts.at(-1)!.data.at) - Number(interrupts[0]!.data.at);
    expect(interrupts.length).toBeLessThanOrEqual(BURST + Math.floor(span / EVERY));

    // The plugin's backlog had not drained: its inputs, retried as the flood went on, ran after the person's.
    expect(scheduler.slice(done).some((e) => e.type === 'TaskStarted' && fromPlugin.has(e.data.taskId))).toBe(true);

    // The flood is recorded once a misbehaviour window (60 s: once in a run this short); its other
    // refusals are only counted, in the window's one summary.
    const plugins = await logOf(dir, '--stream', 'plugins');
    const misbehaved = plugins.filter((e) => e.type === 'PluginMisbehaved');
    expect(misbehaved.map((e) => [e.data.plugin, e.data.code])).toEqual(misbehaved.map(() => ['spammer', 'INPUT_FLOOD']));
    expect(misbehaved.length).toBeGreaterThanOrEqual(1);
    expect(misbehaved[0]!.data.message).toMatch(/plugin 'spammer' (already has 32 inputs|has used its 8 interrupts)/);
    const at = (e: LogLine) => (e as LogLine & { at: number }).at;
    expect(typeof at(misbehaved[0]!)).toBe('number');
    const gaps = misbehaved.slice(1).map((e, i) => at(e) - at(misbehaved[i]!));
    expect(gaps.filter((gap) => !(gap >= 60_000))).toEqual([]);
    const summaries = plugins.filter((e) => e.type === 'PluginMisbehaviourSummarised').map((e) => e.data);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries[0]).toMatchObject({ plugin: 'spammer', byCode: { INPUT_FLOOD: expect.any(Number) } });
    expect(summaries[0]!.suppressed).toBeGreaterThanOrEqual(1_300 - WAITING - 1);
    // Nothing refused was journaled: every input of the plugin in the log was admitted under its bound.
    expect(fromPlugin.size).toBeLessThan(1_300);
    await verifyReplay(dir);
  });

  it("keeps one interrupt always waiting within its bound, and the person's message still goes next in line, never preempted", async () => {
    const llm = await startLlmServer([
      { when: (request) => lastUserText(request).includes('person here'), reply: { text: 'Hello, person.', slow: { chunkDelayMs: 50 } } },
      { when: () => true, reply: { text: 'noted, noted, noted', slow: { chunkDelayMs: 150 } }, repeat: true },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, plugins: ['pesterer'] });
    const daemon = await daemons.start(dir);
    await outputUntil(daemon, /plugin pesterer: started 1\n/);

    const replies = await askSocket(dir, 'person here: may I have a word?');
    const personInput = replies.find((r) => r.inputId)?.inputId;
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    await outputUntil(daemon, /plugin pesterer: refused after \d+\n/);
    await daemons.stop(daemon);

    const scheduler = await logOf(dir, '--stream', 'scheduler');
    const arrived = scheduler.findIndex((e) => e.type === 'InputQueued' && e.data.inputId === personInput);
    const started = scheduler.findIndex((e) => e.type === 'TaskStarted' && e.data.taskId === personInput);
    expect(arrived).toBeGreaterThan(-1);
    const plugin = (from: number, to: number, type: string) =>
      scheduler.slice(from, to).filter((e) => e.type === type && e.data.source === 'pesterer');
    // It kept one waiting: interrupts came after the person's message, yet none of them started before it.
    const cameAfter = new Set(plugin(arrived, scheduler.length, 'InputQueued').map((e) => e.data.inputId));
    expect(cameAfter.size).toBeGreaterThan(0);
    expect(scheduler.slice(arrived, started).filter((e) => e.type === 'TaskStarted' && cameAfter.has(e.data.taskId))).toEqual([]);
    expect(scheduler.filter((e) => e.type === 'TaskPreempted' && e.data.taskId === personInput)).toEqual([]);
    expect(scheduler[arrived]!.data.origin).toBe('user');
    await verifyReplay(dir);
  });

  it('cannot hold the person behind its own task by lifting it with the starvation guard', async () => {
    const llm = await startLlmServer([
      {
        when: (request) => lastUserText(request) === 'hang please',
        reply: { toolCalls: [{ name: 'hang_tool', arguments: {} }] },
        repeat: true,
      },
      { when: (request) => lastUserText(request) === 'a quick one', reply: { text: 'quick' }, repeat: true },
      { when: (request) => lastUserText(request).startsWith('person'), reply: { text: 'Here I am.' }, repeat: true },
    ]);
    daemons.onCleanup(() => llm.close());
    const dir = testDataDir(tempDir(), { llm, plugins: ['sneak'] });
    const daemon = await daemons.start(dir);
    // Its L2 was preempted once by its own L3 (the guard counts it as L3 now) and runs again, hanging on its tool.
    await expect.poll(async () => (await logOf(dir, '--type', 'TaskResumed')).length, { timeout: 20_000 }).toBe(1);

    const replies = await askSocket(dir, 'person here: are you there?');
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    const personInput = replies.find((r) => r.inputId)?.inputId;
    await daemons.stop(daemon);
    const scheduler = await logOf(dir, '--stream', 'scheduler');
    const preempted = scheduler.filter((e) => e.type === 'TaskPreempted').map((e) => [e.data.preemptCount, e.data.by === personInput]);
    expect(preempted).toEqual([
      [1, false],
      [2, true],
    ]);
    await verifyReplay(dir);
  });
});
