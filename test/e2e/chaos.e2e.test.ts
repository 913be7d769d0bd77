/**
 * The chaos suite's crash half (loopback only, bounded in time): the daemon SIGKILLed eight
 * times in the middle of mixed traffic, and a plugin that forks and dies on every start. After
 * each: the daemon is up (or starts again), answers a new message, stayed under 400 MB resident,
 * and `homed replay --verify` passes. The rest of the suite: hostileClients (early close, 2,000
 * unread lines, a 64 MiB line, 1,000 connections), pluginHostile (name theft, environment and
 * settings reads, a notification flood, stdout garbage), hostileFiles (special files) and luaBomb
 * (memory and backtracking bombs).
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { rssMb } from '../support/cliSockets.ts';
import { askSocket, type CliReply, logOf, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { afterToolResult, lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { findTagged, finished, instanceOfTag, runHomed, spawnNode, taggedProcessState, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const RSS_LIMIT_MB = 400;
const tempDir = useTempDir();
const daemons = useDaemons();

/** A story streams for about a second (so kills land mid-stream); `tool …` calls the fragile plugin's echo first. */
const startChaosLlm = () =>
  startLlmServer([
    { when: afterToolResult, reply: { text: 'The echo came back.' }, repeat: true },
    {
      when: (r) => lastUserText(r).startsWith('tool'),
      reply: { toolCalls: [{ name: 'fragile_echo', arguments: { text: 'ping' } }] },
      repeat: true,
    },
    { when: (r) => lastUserText(r).startsWith('ping'), reply: { text: 'pong' }, repeat: true },
    {
      when: () => true,
      reply: { text: 'Once upon a time there was a daemon that was killed again and again. '.repeat(3), slow: { chunkDelayMs: 25 } },
      repeat: true,
    },
  ]);

const answerOf = (replies: readonly CliReply[]): string =>
  replies
    .filter((r) => r.type === 'chunk')
    .map((r) => r.text)
    .join('');

/** Samples a process's resident memory until it exits; `peak()` is the highest seen. */
const samplePeakRss = (pid: number) => {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // exited (a zombie has no VmRSS): the last sample stands
    }
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
};

/** Everything a stream prints from now on. */
const collect = (stream: Readable | null): (() => string) => {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return () => text;
};

/** Every input the scheduler queued, and how many outcomes (TaskCompleted or InputShortCircuited) each has. */
const outcomesPerInput = async (dir: string): Promise<Map<string, number>> => {
  const scheduler = await logOf(dir, '--stream', 'scheduler');
  const outcomes = new Map<string, number>();
  for (const event of scheduler) if (event.type === 'InputQueued') outcomes.set(String(event.data.inputId), 0);
  for (const event of scheduler) {
    const id = event.type === 'TaskCompleted' ? event.data.taskId : event.type === 'InputShortCircuited' ? event.data.inputId : undefined;
    if (id !== undefined) outcomes.set(String(id), (outcomes.get(String(id)) ?? 0) + 1);
  }
  return outcomes;
};

describe('chaos through homed', () => {
  it('eight SIGKILLs during mixed traffic: each restart answers, no input ends twice, and the log replays', async () => {
    const server = await startChaosLlm();
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['fragile'] });
    // Where each kill lands after the traffic starts: mid-stream, mid-tool call, right after the start.
    const killAfterMs = [150, 700, 300, 900, 40, 1_100, 250, 600];
    let peakRss = 0;

    for (const [round, delay] of killAfterMs.entries()) {
      const daemon = await daemons.start(dir);
      const rss = samplePeakRss(daemon.process.pid!);
      // Settled from the start: a client of a killed daemon may fail before anyone awaits it.
      const traffic = Promise.allSettled([
        askSocket(dir, `story ${round}`),
        askSocket(dir, `tool ${round}`),
        askSocket(dir, `another story ${round}`),
        finished(spawnNode([WAITER, '--data', dir, '--stop'])),
      ]);
      await sleep(delay);
      daemon.process.kill('SIGKILL');
      expect((await daemon.exited).signal).toBe('SIGKILL');
      rss.stop();
      peakRss = Math.max(peakRss, rss.peak());
      await traffic; // clients of a killed daemon see their socket close; none may hang
    }

    const last = await daemons.start(dir);
    const rss = samplePeakRss(last.process.pid!);
    // What the kills cut short is finished or abandoned first; then a new message is answered.
    expect(answerOf(await askSocket(dir, 'ping after the storm'))).toBe('pong');
    await expect
      .poll(async () => [...(await outcomesPerInput(dir)).values()].filter((n) => n === 0).length, { timeout: 60_000, interval: 1_000 })
      .toBe(0);
    rss.stop();
    peakRss = Math.max(peakRss, rss.peak());
    await daemons.stop(last);

    const outcomes = await outcomesPerInput(dir);
    expect(outcomes.size, 'inputs queued across the nine boots').toBeGreaterThanOrEqual(killAfterMs.length);
    expect(
      [...outcomes].filter(([, n]) => n !== 1),
      'inputs without exactly one outcome',
    ).toEqual([]);
    expect((await logOf(dir, '--type', 'KernelStarted')).length).toBe(killAfterMs.length + 1);
    expect(peakRss, 'peak resident memory (MB)').toBeLessThan(RSS_LIMIT_MB);
    await verifyReplay(dir);
  }, 150_000); // eight restarts of a daemon: about 45 s alone, more beside another test file

  it('a plugin that forks and dies on every start is restarted with backoff, given up after its fourth crash, and leaves no process behind', async () => {
    const server = await startChaosLlm();
    daemons.onCleanup(() => server.close());
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['forkdier'] });
    const daemon = await daemons.start(dir);
    const rss = samplePeakRss(daemon.process.pid!);
    const printed = collect(daemon.process.stdout);
    const grandchildren = (): string[] =>
      [...`${daemon.output}${printed()}`.matchAll(/plugin forkdier: grandchild (\S+)/g)].map((m) => m[1]!);
    daemons.onCleanup(async () => {
      for (const tag of grandchildren()) {
        const pid = findTagged(tag);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      }
    });

    await expect.poll(async () => (await logOf(dir, '--type', 'PluginGaveUp')).length, { timeout: 30_000, interval: 500 }).toBe(1);
    expect(grandchildren()).toHaveLength(4);
    // Each tag names one of the four starts, so 'gone' below is about its grandchild, not a tag that matches nothing.
    const starts = (await logOf(dir, '--type', 'PluginProcessSpawned')).map((e) => e.data.instance);
    expect(grandchildren().map(instanceOfTag).sort()).toEqual([...starts].sort());
    // Each death took its process group with it: no grandchild outlives its plugin.
    await expect.poll(() => grandchildren().filter((tag) => taggedProcessState(tag) === 'alive'), { timeout: 2_000 }).toEqual([]);
    const crashes = await logOf(dir, '--type', 'PluginCrashed');
    expect(crashes.map((e) => e.data.plugin)).toEqual(Array(4).fill('forkdier'));

    // The listing says why it was given up, live and from the log once homed is stopped.
    const gaveUpRow = /^forkdier +\S+ +gaveUp .*\n {2}last failure: exited with code 7$/m;
    expect((await runHomed(['plugins', '--data', dir])).stdout).toMatch(gaveUpRow);

    expect(answerOf(await askSocket(dir, 'ping, are you there?'))).toBe('pong');
    rss.stop();
    expect(rss.peak(), 'peak resident memory (MB)').toBeLessThan(RSS_LIMIT_MB);
    await daemons.stop(daemon);
    expect((await runHomed(['plugins', '--data', dir])).stdout).toMatch(gaveUpRow);
    await verifyReplay(dir);
  });
});
