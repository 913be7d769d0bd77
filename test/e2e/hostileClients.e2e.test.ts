/**
 * Clients of the cli socket that no polite program would be, against one running homed (loopback
 * only, bounded in time): clients that leave before, during and after their reply or half-close,
 * one that sends 2,000 lines and reads nothing, a 64 MiB line, 1,000 connections at once, a
 * 10 MB message; and a daemon out of file descriptors. After each the daemon is up, answers a
 * new message, stayed under 400 MB resident, and `homed replay --verify` passes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CLI_CLIENTS, MAX_PENDING_MESSAGES } from '../../plugins/builtin/cli/cliWire.ts';
import { connectCli, repliesOf, requestLine, rssMb } from '../support/cliSockets.ts';
import { askSocket, logOf, type StartOptions, testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { type LlmServer, lastUserText, startLlmServer } from '../support/llmServer/index.ts';
import { finished, hasNoStackTrace, runNodeWithInput, spawnNode, WAITER } from '../support/processes.ts';

const RSS_LIMIT_MB = 400;
/** What the flood's messages are answered with: 256 KiB, so its unread replies pass the high-water mark after a few. */
const BIG_REPLY = 'x'.repeat(256 * 1024);

const daemons = useDaemons();
let root: string;
let server: LlmServer;
let dirs = 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hologram-hostile-'));
  server = await startLlmServer([
    { when: (r) => lastUserText(r).startsWith('flood'), reply: { text: BIG_REPLY }, repeat: true },
    { when: () => true, reply: { text: 'still here' }, repeat: true },
  ]);
});

afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

type Victim = Readonly<{
  dir: string;
  pid: number;
  llm: boolean;
  exitCode: () => number | null;
  peakRssMb: () => number;
}>;

/** A homed of its own for one test (with `llm`: answered by the scripted server), its resident memory sampled all along. */
const startVictim = async ({ llm = true, ...options }: StartOptions & { llm?: boolean } = {}): Promise<Victim> => {
  const dir = testDataDir(join(root, `d${++dirs}`), llm ? { llm: server } : {});
  const daemon = await daemons.start(dir, options);
  const pid = daemon.process.pid!;
  let peak = rssMb(pid);
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      // gone: expectHealthy says so
    }
  }, 50);
  daemons.onCleanup(async () => clearInterval(sampler));
  return { dir, pid, llm, exitCode: () => daemon.process.exitCode, peakRssMb: () => peak };
};

/** Resolves once a new client is served, not refused: the daemon has seen the clients a test dropped go. */
const servedAgain = async (dir: string): Promise<void> => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const socket = await connectCli(dir).catch(() => undefined);
    const replies = socket && repliesOf(socket);
    socket?.write(requestLine({ type: 'tools' }));
    const reply = await replies?.next();
    socket?.destroy();
    if (reply?.type === 'tools') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('homed still refuses new clients 10 s after the others left');
};

/** The daemon is up, answers a new message (without a model: with what to configure), stayed under the memory limit, and its log replays. */
const expectHealthy = async (victim: Victim): Promise<void> => {
  expect(victim.exitCode(), 'the daemon exited').toBeNull();
  const replies = await askSocket(victim.dir, 'are you there?');
  if (victim.llm) {
    expect(replies.filter((r) => r.type === 'chunk').map((r) => r.text)).toEqual(['still here']);
    expect(replies.at(-1)).toEqual({ type: 'end', text: '', outcome: 'answer', inputId: expect.any(String) });
  } else {
    expect(replies.at(-1)).toMatchObject({ type: 'end', outcome: 'failed', text: expect.stringContaining('llm.sources') });
  }
  expect(victim.peakRssMb(), 'peak resident memory (MB)').toBeLessThan(RSS_LIMIT_MB);
  await verifyReplay(victim.dir);
};

describe('hostile cli clients', () => {
  it('with no model configured, clients that send a message and close at once leave the daemon unharmed', async () => {
    // The quick start's first waiter message, as a client that does not wait for the answer.
    const victim = await startVictim({ llm: false });
    for (let i = 0; i < 20; i++) {
      const socket = await connectCli(victim.dir);
      socket.end(requestLine({ type: 'message', text: `hello ${i}`, from: 'early' }));
      if (i % 2 === 0) socket.destroy();
    }
    const waiter = spawnNode([WAITER, '--data', victim.dir, 'and me?']);
    const done = finished(waiter);
    waiter.stdout?.destroy(); // nobody reads waiter's output either
    await done;
    await expectHealthy(victim);
  });

  it('clients that leave before their reply, mid-stream, half-closed or right after it leave the daemon unharmed', async () => {
    const victim = await startVictim();
    const { dir } = victim;
    // Before the reply: connect, send, vanish.
    for (let i = 0; i < 10; i++) {
      const socket = await connectCli(dir);
      socket.end(requestLine({ type: 'message', text: `leaving early ${i}`, from: 'early' }));
      socket.destroy();
    }
    // Mid-stream: the first chunk, then gone.
    const mid = await connectCli(dir);
    const midReplies = repliesOf(mid);
    mid.write(requestLine({ type: 'message', text: 'flood, but I leave', from: 'early' }));
    for (let reply = await midReplies.next(); reply && reply.type !== 'chunk'; reply = await midReplies.next());
    mid.destroy();
    // Half-closed after the request: the whole reply still comes, then the daemon closes its side.
    const half = await connectCli(dir);
    const halfReplies = repliesOf(half);
    half.end(requestLine({ type: 'message', text: 'half-closed hello', from: 'half' }));
    await halfReplies.closed();
    expect(halfReplies.replies.map((r) => r.type)).toEqual(['accepted', 'chunk', 'end']);
    // Right after the reply, and a garbage line with it.
    const after = await connectCli(dir);
    const afterReplies = repliesOf(after);
    after.write('{"type": "nonsense"}\n');
    expect(await afterReplies.next()).toMatchObject({ type: 'error', code: 'bad_request' });
    after.destroy();
    await expectHealthy(victim);
  });

  it('a client that sends 2,000 lines and reads nothing gets a few served, then is not read from', async () => {
    const victim = await startVictim();
    const { dir } = victim;
    const flood = await connectCli(dir);
    flood.pause(); // reads nothing, ever
    const lines = Array.from({ length: 2_000 }, (_, i) => requestLine({ type: 'message', text: `flood ${i}`, from: 'flood' })).join('');
    flood.write(lines);
    // Meanwhile another client is answered: the flood did not queue 2,000 inputs ahead of it.
    const during = await askSocket(dir, 'are you there?');
    expect(during.at(-1)).toMatchObject({ type: 'end', outcome: 'answer' });
    const delivered = await logOf(dir, '--stream', 'scheduler', '--type', 'InputDelivered');
    const fromFlood = delivered.filter((e) => JSON.stringify(e.data).includes('"conversation":"cli:flood"'));
    expect(fromFlood.length, 'inputs the flood got in').toBeGreaterThan(0);
    // At most MAX_PENDING_MESSAGES waiting at once, and reading stops once its replies back up: a handful.
    expect(fromFlood.length, 'inputs the flood got in').toBeLessThanOrEqual(2 * MAX_PENDING_MESSAGES);
    flood.destroy();
    await expectHealthy(victim);
  });

  it('a 64 MiB line is refused with one error naming the limit, without being buffered', async () => {
    const victim = await startVictim();
    const socket = await connectCli(victim.dir);
    const replies = repliesOf(socket);
    const huge = requestLine({ type: 'message', text: 'y'.repeat(64 * 1024 * 1024), from: 'huge' });
    socket.write(huge); // the daemon stops reading and closes: EPIPE here is expected
    await replies.closed();
    expect(replies.replies).toEqual([{ type: 'error', code: 'line_too_long', message: expect.stringContaining('at most 1 MiB') }]);
    expect(JSON.stringify(await logOf(victim.dir, '--type', 'InputDelivered'))).not.toContain('yyyyyyyyyy');
    await expectHealthy(victim);
  });

  it('1,000 connections at once: the first 256 are served, the rest told it is busy; waiter says so in one line', async () => {
    const victim = await startVictim();
    const clients = [];
    const told = [];
    for (let i = 0; i < 1_000; i++) {
      const socket = await connectCli(victim.dir);
      const replies = repliesOf(socket);
      clients.push({ socket, replies });
      // Those beyond the limit are told at once, unasked. Each is heard before the next connects:
      // a loaded machine's daemon may accept more slowly than a loop connects, and a full listen
      // queue refuses a connection (EAGAIN) before the daemon ever sees it.
      if (i >= MAX_CLI_CLIENTS) told.push(await replies.next());
    }
    const served = clients.slice(0, MAX_CLI_CLIENTS);
    for (const reply of told) {
      expect(reply).toEqual({ type: 'error', code: 'busy', message: expect.stringContaining('256 cli clients') });
    }
    const answers = await Promise.all(
      served.map(({ socket, replies }) => {
        socket.write(requestLine({ type: 'tools' }));
        return replies.next();
      }),
    );
    expect(answers.filter((a) => a?.type === 'tools')).toHaveLength(MAX_CLI_CLIENTS);
    const waiter = await finished(spawnNode([WAITER, '--data', victim.dir, 'hello?']));
    expect(waiter.code).toBe(1);
    expect(waiter.stderr.trim().split('\n')).toEqual([expect.stringContaining('homed already serves 256 cli clients')]);
    for (const { socket } of clients) socket.destroy();
    await servedAgain(victim.dir);
    await expectHealthy(victim);
  });

  it('a 10 MB message is refused before it enters the system, and the conversation goes on', async () => {
    const victim = await startVictim();
    const { dir } = victim;
    const socket = await connectCli(dir);
    const replies = repliesOf(socket);
    socket.write(requestLine({ type: 'message', text: 'word '.repeat(2_000_000), from: 'big' }));
    await replies.closed();
    expect(replies.replies).toEqual([expect.objectContaining({ type: 'error', code: 'line_too_long' })]);
    // waiter refuses it itself, in one line, goes on with the next message, and says by its exit status that one was not sent.
    const result = await runNodeWithInput([WAITER, '--data', dir], `${'z'.repeat(10_000_000)}\nand now a short one\n`);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe(
      'waiter: this message is 9.5 MiB as a request, and homed takes at most 1 MiB per request; send a shorter one\n',
    );
    expect(result.stdout).toBe('still here\n');
    // The same conversation, before and after: normal messages are answered.
    expect((await askSocket(dir, 'a normal message after the big one')).at(-1)).toMatchObject({ outcome: 'answer' });
    await expectHealthy(victim);
  });
});

describe('a daemon out of file descriptors', () => {
  it('refuses the connections it cannot accept, tells waiter in one line, and serves again once clients leave', async () => {
    const victim = await startVictim();
    const { dir } = victim;
    expect((await askSocket(dir, 'warm up')).at(-1)).toMatchObject({ outcome: 'answer' });
    // Lowered once it runs (loading its modules needs more): a few descriptors left, as after a long day.
    const open = readdirSync(`/proc/${victim.pid}/fd`).length;
    execFileSync('prlimit', ['--pid', String(victim.pid), `--nofile=${open + 24}:${open + 24}`]);
    const sockets = [];
    for (let i = 0; i < 60; i++) sockets.push(await connectCli(dir).catch(() => undefined));
    const waiter = await finished(spawnNode([WAITER, '--data', dir, 'hello?']));
    expect(waiter.code).toBe(1);
    expect(waiter.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^waiter: .*homed on .*: it stopped, or is out of file descriptors/),
    ]);
    expect(hasNoStackTrace(waiter.stderr)).toBe(true);
    for (const socket of sockets) socket?.destroy();
    await servedAgain(dir);
    await expectHealthy(victim);
  });
});
