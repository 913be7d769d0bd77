/**
 * The web UI's HTTP surface against callers who should not get in or should not get far: no
 * token, a wrong one, another site's page (a foreign Origin, a rebound Host), bodies that are
 * not JSON, too big, or of the wrong shape, too many live views; and settings of the wrong kind
 * or a port already taken, which stop the web UI with what to fix while the daemon runs on. And
 * the ways in cannot be shut by themselves: neither the web UI nor waiter's socket can disable or
 * stop the plugin that carries the request, so a person is never locked out of the daemon.
 */
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { webuiUrlOf } from '../support/browser.ts';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { finished, runHomed, spawnNode, WAITER } from '../support/processes.ts';
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

describe('the web UI against hostile callers', () => {
  it('lets in only the token, only from its own origin, and only bodies it can read', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;

    expect((await call(url, '/api/overview')).status).toBe(401);
    expect((await call(url, '/api/overview', { headers: signedIn('0'.repeat(64)) })).status).toBe(401);
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
    expect((await call(url, '/nowhere', { headers: signedIn(token) })).status).toBe(404);

    // Live views are capped; one more is told so, and the daemon still answers.
    const opened = await Promise.all(Array.from({ length: 32 }, () => call(url, '/api/live?after=0', { headers: signedIn(token) })));
    expect(opened.every((a) => a.status === 200)).toBe(true);
    expect((await call(url, '/api/live?after=0', { headers: signedIn(token) })).status).toBe(503);
    expect((await call(url, '/api/overview', { headers: signedIn(token) })).status).toBe(200);
  });

  it('refuses to disable or stop the plugin a request came through; the other way in still can, and the daemon answers on', async () => {
    const dir = testDataDir(tempDir());
    const url = webuiUrlOf((await daemons.start(dir)).output);
    const token = url.searchParams.get('token')!;
    const act = (action: string, name: string) =>
      call(url, '/api/plugin', { method: 'POST', headers: signedIn(token, asJson), body: JSON.stringify({ action, name }) });
    for (const action of ['disable', 'stop']) {
      const self = await act(action, 'webui');
      expect(self.status).toBe(400);
      expect(JSON.parse(self.body).error).toContain(`this request came through the webui plugin: to ${action} it would cut off`);
      const cli = await runHomed(['plugins', action, 'cli', '--data', dir]);
      expect(cli.code).toBe(1);
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect(cli.stderr).toContain(`this request came through the cli plugin: to ${action} it would cut off`);
    }
    // Each may still do it to the other: the web UI restarts waiter's socket, waiter's socket the web UI.
    expect(JSON.parse((await act('reload', 'cli')).body).plugin).toMatchObject({ name: 'cli', state: 'running' });
    const listed = await runHomed(['plugins', '--data', dir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^cli\s+builtin\s+running/m);
    expect(listed.stdout).toMatch(/^webui\s+builtin\s+running/m);
  });

  it('stops the web UI, not the daemon, for a setting of the wrong kind or a port in use, saying what to fix', async () => {
    const llm = await startLlmServer([{ text: 'still here' }, { text: 'still here' }]);
    daemons.onCleanup(() => llm.close());
    const wrongKind = testDataDir(tempDir(), { llm, settings: { plugins: { webui: { port: 'eighty' } } } });
    const first = await daemons.start(wrongKind);
    expect(first.output).toMatch(/plugin webui: start failed: .*plugins\.webui\.port is "eighty": give a whole number/);
    expect((await finished(spawnNode([WAITER, '--data', wrongKind, 'hello']))).stdout).toBe('still here\n');

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

  it('keeps the token across restarts, so a signed-in browser stays signed in', async () => {
    const dir = testDataDir(tempDir());
    const first = await daemons.start(dir);
    const before = webuiUrlOf(first.output).searchParams.get('token');
    await daemons.stop(first);
    const after = webuiUrlOf((await daemons.start(dir)).output).searchParams.get('token');
    expect(after).toBe(before);
  });
});
