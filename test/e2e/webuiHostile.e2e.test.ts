/**
 * The web UI's HTTP surface against callers who should not get in or should not get far: no
 * token, a wrong one, another site's page (a foreign Origin, a rebound Host), bodies that are
 * not JSON, too big, or of the wrong shape, too many live views; and settings of the wrong kind
 * or a port already taken, which stop the web UI with what to fix while the daemon runs on. And
 * the ways in cannot be shut by themselves: neither the web UI nor waiter's socket can disable or
 * stop the plugin that carries the request, so a person is never locked out of the daemon.
 * Time travel on a long log leaves the daemon answering messages, runs one request and queues
 * one (the rest are told it is busy), and stops the work of a page that went away; connections
 * that trickle their headers cannot lock the owner out; and settings out of range are refused
 * by the same rule when the web UI saves them and when homed starts.
 */
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { webuiUrlOf } from '../support/browser.ts';
import { askSocket, testDataDir, useDaemons, type RunningDaemon } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { FILLER_EVENTS, longLogDataDir } from '../support/longLog.ts';
import { finished, HOMED, hasNoStackTrace, runHomed, runNodeWithInput, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();

type Answer = Readonly<{ status: number; body: string; headers: Record<string, unknown> }>;

/** One HTTP request with exactly these headers (Host included), read whole unless it is a live stream. */
const call = (
  url: URL,
  path: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
) =>
  new Promise<Answer>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method, headers: { host: url.host, ...headers } }, (res) => {
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 0, body: '', headers: res.headers });
        return;
      }
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });

const signedIn = (token: string, more: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...more });
const asJson = { 'content-type': 'application/json' };

/** A GET that the test can walk away from before the answer, as a closed tab does. */
const leavable = (url: URL, path: string, token: string) => {
  let leave: () => void = () => undefined;
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { host: url.host, ...signedIn(token) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
    leave = () => req.destroy();
  });
  return { answer, leave: () => leave() };
};

/** Resolves when the daemon has printed `pattern` `times` times since this was called. */
const printed = (daemon: RunningDaemon, pattern: RegExp, times = 1) =>
  new Promise<void>((resolve) => {
    let seen = '';
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      if ((seen.match(new RegExp(pattern.source, 'g')) ?? []).length >= times) {
        daemon.process.stdout?.off('data', look);
        resolve();
      }
    };
    daemon.process.stdout?.on('data', look);
  });

/** A connection that sends the start of a request and never finishes its headers. */
const trickling = (url: URL): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`GET /api/overview HTTP/1.1\r\nHost: ${url.host}\r\nX-Slow: `);
      resolve(socket);
    });
    socket.on('error', reject);
  });

describe('the web UI against hostile callers', () => {
  it('lets in only the token, only from its own origin, and only bodies it can read', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;

    expect((await call(url, '/api/overview')).status).toBe(401);
    expect((await call(url, '/api/overview', { headers: signedIn('0'.repeat(64)) })).status).toBe(401);
    // As long as the token in characters, longer in bytes: it answered 500 and logged a line per request.
    const multibyte = await call(url, '/api/overview', { headers: { authorization: `Bearer ${'é'.repeat(64)}` } });
    expect(multibyte.status).toBe(401);
    expect((await call(url, `/?token=${'%C3%A9'.repeat(64)}`)).status).toBe(401);
    const wrong = await call(url, '/?token=nope');
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie'], 'a wrong token signs nobody in').toBeUndefined();
    expect(wrong.body, 'a page a person can read, saying where the token is').toMatch(/not this web UI's[\s\S]*state\/webui\/token/);
    const overview = await call(url, '/api/overview', { headers: signedIn(token) });
    expect(overview.status).toBe(200);
    expect(JSON.parse(overview.body)).toMatchObject({ defaultConversation: 'webui:owner', approvals: [] });
    // The printed URL sets the cookie a browser then sends.
    const signIn = await call(url, `/?token=${token}`);
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    expect(String(signIn.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await call(url, '/api/overview', { headers: { cookie } })).status).toBe(200);

    // Another site: a rebound Host name, a foreign Origin.
    const rebound = await call(url, '/api/overview', { headers: signedIn(token, { host: `evil.example:${url.port}` }) });
    expect(rebound.status).toBe(421);
    const foreign = await call(url, '/api/message', {
      method: 'POST',
      headers: signedIn(token, { ...asJson, origin: 'http://evil.example' }),
      body: '{"text":"hi"}',
    });
    expect(foreign.status).toBe(403);

    // Bodies: not JSON, too big, the wrong shape; each refused with what to send.
    const post = (body: string | Buffer, headers: Record<string, string> = asJson) =>
      call(url, '/api/message', { method: 'POST', headers: signedIn(token, headers), body });
    expect((await post('{"text":"hi"}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post('{not json')).status).toBe(400);
    expect((await post(Buffer.alloc(1024 * 1024 + 10, 0x20))).status).toBe(413);
    const shapeless = await post('{"text":42}');
    expect(shapeless.status).toBe(400);
    expect(JSON.parse(shapeless.body).error).toMatch(/'text' must be a non-empty string/);
    const badConversation = await post('{"text":"hi","conversation":"<b>not a key</b>"}');
    expect(badConversation.status).toBe(400);
    const approveNothing = await call(url, '/api/approve', {
      method: 'POST',
      headers: signedIn(token, asJson),
      body: '{"approval":"nope-1.1","approved":true}',
    });
    expect(approveNothing.status).toBe(400);
    expect((await call(url, '/api/turn?id=no-such-turn', { headers: signedIn(token) })).status).toBe(404);
    expect((await call(url, '/api/events?from=-3', { headers: signedIn(token) })).status).toBe(400);
    // Digits only: 1e3 and 0x10 were read as numbers, and k=0 as a recall of one (found by the hostile tester).
    for (const query of ['/api/events?from=1e3', '/api/events?from=0x10', '/api/recall?q=x&k=0', '/api/live?after=1e3']) {
      const refused = await call(url, query, { headers: signedIn(token) });
      expect(refused.status, `${query}: ${refused.body}`).toBe(400);
    }
    expect(JSON.parse((await call(url, '/api/recall?q=x&k=0', { headers: signedIn(token) })).body).error).toBe(
      "'k' must be a whole number of at least 1, got '0'",
    );
    expect((await call(url, '/nowhere', { headers: signedIn(token) })).status).toBe(404);

    // Live views are capped; one more is told so, and the daemon still answers.
    const opened = await Promise.all(Array.from({ length: 32 }, () => call(url, '/api/live?after=0', { headers: signedIn(token) })));
    expect(opened.every((a) => a.status === 200)).toBe(true);
    expect((await call(url, '/api/live?after=0', { headers: signedIn(token) })).status).toBe(503);
    expect((await call(url, '/api/overview', { headers: signedIn(token) })).status).toBe(200);
  });

  it('refuses to disable, stop or reload the plugin a request came through; the other way in still can, and the daemon answers on', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const act = (action: string, name: string) =>
      call(url, '/api/plugin', { method: 'POST', headers: signedIn(token, asJson), body: JSON.stringify({ action, name }) });
    // A reload, too, cut the request it came through before its answer (a hostile tester's reload of cli).
    for (const action of ['disable', 'stop', 'reload']) {
      const self = await act(action, 'webui');
      expect(self.status).toBe(400);
      expect(JSON.parse(self.body).error).toContain(`this request came through the webui plugin: to ${action} it would cut off`);
      // Each names the way in that works, not the one just refused.
      expect(JSON.parse(self.body).error).toContain(`('homed plugins ${action} webui' from a terminal)`);
      expect(JSON.parse(self.body).error).not.toContain("web UI's plugins view");
      const cli = await runHomed(['plugins', action, 'cli', '--data', dir]);
      expect(cli.code).toBe(1);
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect(cli.stderr).toContain(`this request came through the cli plugin: to ${action} it would cut off`);
      expect(cli.stderr).toContain("(the web UI's plugins view), or stop homed");
      expect(cli.stderr).not.toContain(`'homed plugins ${action} cli'`);
    }
    // Each may still do it to the other: the web UI restarts waiter's socket, waiter's socket the web UI.
    expect(JSON.parse((await act('reload', 'cli')).body).plugin).toMatchObject({ name: 'cli', state: 'running' });
    const listed = await runHomed(['plugins', '--data', dir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^cli\s+builtin\s+running/m);
    expect(listed.stdout).toMatch(/^webui\s+builtin\s+running/m);
  });

  it('refuses a web UI port out of range or of the wrong kind at start; a port in use stops only the web UI', async () => {
    const llm = await startLlmServer([{ text: 'still here' }]);
    daemons.onCleanup(() => llm.close());
    for (const [port, problem] of [
      ['eighty', 'plugins.webui.port: must be a number, got "eighty"'],
      [70000, 'plugins.webui.port: must be at most 65535, got 70000 (a whole number from 0 to 65535)'],
      [-1, 'plugins.webui.port: must be at least 0, got -1 (a whole number from 0 to 65535)'],
    ] as const) {
      const dir = testDataDir(tempDir(), { llm, settings: { plugins: { webui: { port } } } });
      const start = await runHomed(['run', '--data', dir]);
      expect(start.code, start.stdout).toBe(1);
      expect(start.stderr).toContain(problem);
      expect(hasNoStackTrace(start.stderr)).toBe(true);
    }

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    daemons.onCleanup(() => new Promise((resolve) => taken.close(resolve)));
    const port = (taken.address() as AddressInfo).port;
    const busy = testDataDir(tempDir(), { llm, settings: { plugins: { webui: { port } } } });
    const second = await daemons.start(busy);
    expect(second.output).toContain(`127.0.0.1:${port} is in use (another homed?); set plugins.webui.port to a free port, or 0 for any`);
    expect(second.output).toContain(
      "then restart homed (settings.json is read at start), or free that port and run 'homed plugins start webui'",
    );
    expect((await finished(spawnNode([WAITER, '--data', busy, 'hello']))).stdout).toBe('still here\n');
  });

  // Listening on 0.0.0.0, it answered 421 to every other machine (found by the hostile tester); and
  // 'bearer' in lower case was refused though the scheme's name is case-insensitive.
  it('listening on every address, answers to this machine by its addresses and name, still not to a rebound name', async () => {
    const dir = testDataDir(tempDir(), { settings: { plugins: { webui: { port: 0, host: '0.0.0.0' } } } });
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const addresses = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((a) => a.family === 'IPv4' && !a.internal)
      .map((a) => a.address);
    for (const name of [hostname(), ...addresses]) {
      const answer = await call(url, '/api/overview', { headers: { host: `${name}:${url.port}`, authorization: `bearer ${token}` } });
      expect(answer.status, `${name}: ${answer.body}`).toBe(200);
    }
    const rebound = await call(url, '/api/overview', { headers: signedIn(token, { host: `evil.example:${url.port}` }) });
    expect(rebound.status).toBe(421);
  });

  // Red team round 14: with the page's token, one save dropped the source that named a vault key and the next named it
  // with the tester's server (no saved source named it then); a probe sent the key there at once. A hidden apiKey kept
  // with a new URL, and a source sending one of homed's environment variables, went there at the next start.
  it("sends no key the page did not set to a server of the page's choosing, in two saves or one", async () => {
    const heard: string[] = [];
    const attacker = createHttpServer((request, response) => {
      heard.push(String(request.headers.authorization));
      response.end('{}');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    daemons.onCleanup(() => new Promise<void>((resolve) => attacker.close(() => resolve())));
    const evil = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/v1`;
    const good = { name: 'good', adapter: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKeySecret: 'LLM_GOOD' };
    const dir = testDataDir(tempDir(), { sources: [good] });
    const set = await runNodeWithInput([HOMED, 'secret', 'set', 'LLM_GOOD', '--data', dir], 'sk-vault-only-to-good-77\n');
    expect(set.code, set.stderr).toBe(0);
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const post = (path: string, body: unknown) =>
      call(url, path, { method: 'POST', headers: signedIn(token, asJson), body: JSON.stringify(body) });
    expect((await post('/api/settings', { settings: { plugins: { webui: { port: 0 } } } })).status).toBe(200);
    const moved = await post('/api/settings', {
      settings: { plugins: { webui: { port: 0 } }, llm: { sources: [{ ...good, baseUrl: evil }] } },
    });
    expect(moved.status, moved.body).toBe(422);
    expect(JSON.parse(moved.body).problems[0].problem).toContain('would send the vault key LLM_GOOD to http://127.0.0.1:');
    const envSource = { name: 'env', adapter: 'openai', baseUrl: evil, model: 'm', apiKeyEnv: 'PATH' };
    expect((await post('/api/settings', { settings: { llm: { sources: [envSource] } } })).status).toBe(422);
    const probe = await post('/api/probe', { adapter: 'openai', baseUrl: evil, model: 'm', apiKeySecret: 'LLM_GOOD' });
    expect(probe.body).toContain('LLM_GOOD is sent only to the servers of the saved model sources that name it (none)');
    expect(heard).toEqual([]);
  });

  it('refuses to save a port out of range or an unknown projection, by the rule homed starts with', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const save = (settings: unknown) =>
      call(url, '/api/settings', { method: 'POST', headers: signedIn(token, asJson), body: JSON.stringify({ settings }) });
    for (const [settings, key, problem] of [
      [{ plugins: { webui: { port: 70000 } } }, 'plugins.webui.port', 'must be at most 65535, got 70000 (a whole number from 0 to 65535)'],
      [{ plugins: { webui: { port: -1 } } }, 'plugins.webui.port', 'must be at least 0, got -1 (a whole number from 0 to 65535)'],
      [{ projections: { inline: ['kernal'] } }, 'projections.inline[0]', 'did you mean "kernel"?'],
      // Saved once, it stopped the next start (found by the hostile tester).
      [{ llm: { sources: [{ name: 'x', adapter: 'openai', model: 'm' }] } }, 'llm.sources[0]', 'needs baseUrl: the server'],
    ] as const) {
      const refused = await save(settings);
      expect(refused.status, refused.body).toBe(422);
      expect(JSON.parse(refused.body).problems).toEqual([{ key, problem: expect.stringContaining(problem) }]);
    }
    const names = JSON.parse((await save({ projections: { inline: ['kernal'] } })).body).problems[0].problem;
    expect(names).toMatch(/^must be one of "kernel", "scheduler", "streams", "memory_context", .*got "kernal"/);
    // What was refused was never written: the settings still start homed.
    const settings = JSON.parse((await call(url, '/api/settings', { headers: signedIn(token) })).body).settings;
    expect(settings).toEqual({ plugins: { webui: { port: 0 } } });
  });

  it('lets the owner in while 140 connections trickle their headers a byte at a time', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const slow: Socket[] = [];
    daemons.onCleanup(async () => {
      for (const socket of slow) socket.destroy();
    });
    for (let i = 0; i < 140; i++) slow.push(await trickling(url));
    for (const socket of slow) socket.write('x');
    // The owner's connection comes after all of them, with the token.
    const owner = await call(url, '/api/overview', { headers: signedIn(token) });
    expect(owner.status).toBe(200);
    expect(JSON.parse(owner.body).defaultConversation).toBe('webui:owner');
  });

  it('answers a message while time travel runs on a long log, refuses time travel beyond one running and one waiting, and drops the work of a page that left', async () => {
    const dir = await longLogDataDir(daemons, tempDir());
    const daemon = await daemons.start(dir);
    const url = webuiUrlOf(daemon.output);
    const token = url.searchParams.get('token')!;
    const head = JSON.parse((await call(url, '/api/overview', { headers: signedIn(token) })).body).head as number;
    expect(head).toBeGreaterThan(FILLER_EVENTS);

    // Four at once, each further back than the one before, so each rebuilds from the start.
    const order: string[] = [];
    const asked = [0, 1, 2, 3].map((back) =>
      leavable(url, `/api/time?seq=${head - back}`, token).answer.then((answer) => {
        if (answer.status === 200) order.push('time travel');
        return answer;
      }),
    );
    // Once two are refused (so one runs and one waits), a person sends a message.
    let refusedSoFar = 0;
    const twoRefused = new Promise<void>((resolve) => {
      for (const answer of asked) void answer.then((a) => a.status === 429 && ++refusedSoFar === 2 && resolve());
    });
    await Promise.race([twoRefused, Promise.all(asked)]);
    expect(refusedSoFar).toBe(2);
    const replies = askSocket(dir, 'are you there?').then((lines) => {
      order.push('reply');
      return lines;
    });
    const answers = await Promise.all(asked);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429, 429]);
    for (const answer of answers.filter((a) => a.status === 429)) {
      expect(JSON.parse(answer.body).error).toBe(
        'time travel is busy: one request is running and one is waiting; try again when they are done',
      );
    }
    expect((await replies).find((r) => r.type === 'end')).toBeDefined();
    expect(order.indexOf('reply'), order.join(' < ')).toBeLessThan(order.lastIndexOf('time travel'));

    // A page that leaves: its time travel stops, running or waiting, and frees its place.
    const stops = printed(daemon, /time travel stopped: the page that asked for it went away/, 2);
    const running = leavable(url, `/api/time?seq=${head}`, token);
    const waiting = leavable(url, `/api/time?seq=${head - 10}`, token);
    running.answer.catch(() => undefined);
    waiting.answer.catch(() => undefined);
    expect((await call(url, `/api/time?seq=${head - 20}`, { headers: signedIn(token) })).status).toBe(429);
    running.leave();
    waiting.leave();
    await stops;
    const after = await call(url, `/api/time?seq=${head}`, { headers: signedIn(token) });
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body).seq).toBe(head);

    // Verify, run the same way while a message is answered, still finds the log and the read models matching.
    const verifying = call(url, '/api/verify', { method: 'POST', headers: signedIn(token, asJson), body: '{}' });
    expect((await askSocket(dir, 'still there?')).find((r) => r.type === 'end')).toBeDefined();
    const verified = JSON.parse((await verifying).body);
    expect(verified.first).toBeNull();
    expect(new Set(verified.projections.map((p: { status: string }) => p.status))).toEqual(new Set(['match']));
  });

  it('keeps the token across restarts, so a signed-in browser stays signed in', async () => {
    const dir = testDataDir(tempDir());
    const first = await daemons.start(dir);
    const before = webuiUrlOf(first.output).searchParams.get('token');
    await daemons.stop(first);
    const after = webuiUrlOf((await daemons.start(dir)).output).searchParams.get('token');
    expect(after).toBe(before);
  });
});
