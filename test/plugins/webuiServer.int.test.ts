/**
 * The web UI's HTTP server on a real socket, with the daemon's side stood in for: time travel
 * beyond the one running and the one waiting is answered 429 with what to do, and the work of a
 * request whose page went away is stopped (its signal aborted) and logged; connections that
 * trickle their headers cannot fill every slot and lock the owner out, while requests in
 * progress keep theirs (the hard cap).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackgroundWork } from '../../plugins/host/timeTravelDesk.ts';
import { OneRunningOneWaiting } from '../../plugins/host/timeTravelDesk.ts';
import { ConnectionSlots } from '../../plugins/builtin/webui/connectionSlots.ts';
import { LiveStreams } from '../../plugins/builtin/webui/liveStreams.ts';
import { WebuiApi } from '../../plugins/builtin/webui/webuiApi.ts';
import { MAX_CONNECTIONS, WebuiServer } from '../../plugins/builtin/webui/webuiServer.ts';
import type { KernelControl, KernelLogView } from '../../plugins/sdk/builtinPlugin.ts';
import { createFakePluginApi } from '../support/fakePluginApi.ts';

const TOKEN = 'a'.repeat(64);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Time travel that runs until the test lets it answer, or stops once its page went away. */
const heldTimeTravel = () => {
  const slots = new OneRunningOneWaiting();
  const started: { seq: number; answer: () => void; signal: AbortSignal }[] = [];
  const at = (seq: number, work: BackgroundWork = {}) =>
    slots.run(
      () =>
        new Promise<unknown>((resolve, reject) => {
          const signal = work.signal ?? new AbortController().signal;
          started.push({ seq, answer: () => resolve({ seq }), signal });
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      work.signal,
    );
  return { at, verify: () => Promise.resolve({}), started };
};

const noLog: KernelLogView = { read: async () => [], head: async () => 0, follow: () => async () => undefined };

/** A WebuiServer on a free port; the daemon's side is only what these requests reach. */
const startWebui = async (timeTravel = heldTimeTravel()) => {
  const logs: string[] = [];
  const logged: ((line: string) => void)[] = [];
  // Only the calls these tests make are stood in for; the rest of KernelControl is never reached.
  const control = { timeTravel, log: noLog } as unknown as KernelControl;
  const server = new WebuiServer({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    api: new WebuiApi(createFakePluginApi('webui'), control, async () => undefined),
    live: new LiveStreams(noLog, () => undefined),
    assets: { page: () => '<!doctype html>', script: async () => '', style: () => '' },
    log: (line) => {
      logs.push(line);
      for (const listener of logged.splice(0)) listener(line);
    },
  });
  const port = await server.listen();
  cleanups.push(() => server.close());
  const nextLog = () => new Promise<string>((resolve) => logged.push(resolve));
  return { port, logs, nextLog, timeTravel };
};

type Answer = Readonly<{ status: number; body: string }>;

/** A GET with the token; `abort` closes it before the answer (a page that goes away). */
const get = (port: number, path: string) => {
  let abort: () => void = () => undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` } },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
    abort = () => req.destroy();
  });
  return { answer, abort: () => abort() };
};

/** A connection that sends the start of a request and never finishes its headers. */
const slowHeaders = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /api/overview HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `);
      resolve(socket);
    });
    socket.on('error', reject);
    cleanups.push(() => void socket.destroy());
  });

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

describe('the web UI server', () => {
  it('runs one time travel, queues one, and answers the rest 429 with what to do', async () => {
    const { port, timeTravel } = await startWebui();
    const running = get(port, '/api/time?seq=5');
    const waiting = get(port, '/api/time?seq=6');
    await waitFor(() => timeTravel.started.length === 1);
    const refused = await get(port, '/api/time?seq=7').answer;
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toBe(
      'time travel is busy: one request is running and one is waiting; try again when they are done',
    );
    timeTravel.started[0]!.answer();
    expect(JSON.parse((await running.answer).body)).toEqual({ seq: 5 });
    await waitFor(() => timeTravel.started.length === 2);
    timeTravel.started[1]!.answer();
    expect(JSON.parse((await waiting.answer).body)).toEqual({ seq: 6 });
  });

  it('stops the work of a page that went away, running or waiting, and logs it', async () => {
    const { port, timeTravel, nextLog } = await startWebui();
    const running = get(port, '/api/time?seq=5');
    const waiting = get(port, '/api/time?seq=6');
    running.answer.catch(() => undefined);
    waiting.answer.catch(() => undefined);
    await waitFor(() => timeTravel.started.length === 1);
    // The waiting one leaves: it never runs.
    let line = nextLog();
    waiting.abort();
    expect(await line).toBe('time travel stopped: the page that asked for it went away');
    // The running one leaves: its signal is aborted, so its work stops at its next read.
    line = nextLog();
    running.abort();
    expect(await line).toBe('time travel stopped: the page that asked for it went away');
    expect(timeTravel.started.map((s) => [s.seq, s.signal.aborted])).toEqual([[5, true]]);
    // Both places are free again.
    const next = get(port, '/api/time?seq=8');
    await waitFor(() => timeTravel.started.length === 2);
    timeTravel.started[1]!.answer();
    expect((await next.answer).status).toBe(200);
  });

  it(`lets the owner in while ${MAX_CONNECTIONS + 12} connections trickle their headers`, async () => {
    const { port } = await startWebui();
    const slow: Socket[] = [];
    for (let i = 0; i < MAX_CONNECTIONS + 12; i++) slow.push(await slowHeaders(port));
    // The kernel hands connections over in the order they came: the owner's comes after all of them.
    const owner = await get(port, '/api/overview?x=1').answer.catch((error: Error) => ({ status: 0, body: error.message }));
    expect(owner.status, owner.body).not.toBe(0);
    // The oldest trickling connection gave its place up.
    await closed(slow[0]!);
  });
});

describe('connection slots', () => {
  /** A server whose requests stay in progress until the test ends them, with `max` slots. */
  const heldServer = async (max: number) => {
    const held: (() => void)[] = [];
    const server: Server = createServer((_request, response) => held.push(() => response.end('done')));
    new ConnectionSlots(max).watch(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    return { port: (server.address() as AddressInfo).port, held };
  };

  /** A connection with a whole request sent (in progress until the server answers). */
  const requesting = async (port: number): Promise<Socket> => {
    const socket = await slowHeaders(port);
    socket.write('1\r\n\r\n');
    return socket;
  };

  it('evicts the oldest connection without a request in progress, never one with a request', async () => {
    const { port, held } = await heldServer(3);
    const busy = await requesting(port);
    await waitFor(() => held.length === 1);
    const oldestIdle = await slowHeaders(port);
    const newerIdle = await slowHeaders(port);
    const newcomer = await requesting(port);
    await closed(oldestIdle);
    await waitFor(() => held.length === 2);
    expect([busy.destroyed, newerIdle.destroyed, newcomer.destroyed]).toEqual([false, false, false]);
  });

  it('closes a new connection when every slot has a request in progress (the hard cap)', async () => {
    const { port, held } = await heldServer(2);
    await requesting(port);
    await requesting(port);
    await waitFor(() => held.length === 2);
    const refused = await slowHeaders(port).catch(() => undefined);
    if (refused) await closed(refused);
    expect(held).toHaveLength(2);
  });
});

/** Waits until `done` holds, a turn of the event loop at a time (no wall-clock deadline: the test's timeout is the bound). */
async function waitFor(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}
