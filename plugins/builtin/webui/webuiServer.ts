/**
 * The web UI's HTTP server. Every asset comes from the daemon (no CDN, font or script from
 * elsewhere, and a Content-Security-Policy that allows nothing else). Every request needs the
 * token: `/?token=…` (the URL homed prints) sets it as an HttpOnly, SameSite=Strict cookie, and
 * an `Authorization: Bearer` header works for scripts. Hostile requests are bounded: an unknown
 * Host (DNS rebinding) or a foreign Origin is refused, bodies are at most MAX_BODY_BYTES of JSON,
 * slow clients time out, and connections and live streams are capped; connections that hold a
 * slot without a request in progress give it up to new ones (see ConnectionSlots).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { wholeNumberOf } from '../../../events/index.ts';
import { TimeTravelBusy } from '../../host/timeTravelDesk.ts';
import { BadRequest, NotFound, Unfit, type WebuiApi } from './webuiApi.ts';
import { ConnectionSlots } from './connectionSlots.ts';
import type { LiveStreams } from './liveStreams.ts';
import { tokenMatches } from './webuiToken.ts';

export const MAX_BODY_BYTES = 1024 * 1024;
/** Connections at once; beyond it a new one takes the place of the oldest idle one. */
export const MAX_CONNECTIONS = 128;
const COOKIE = 'hologram_token';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export type Assets = Readonly<{ page(): string; script(): Promise<string>; style(): string }>;

export type WebuiServerOptions = Readonly<{
  host: string;
  port: number;
  token: string;
  api: WebuiApi;
  live: LiveStreams;
  assets: Assets;
  log: (line: string) => void;
}>;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Why background work stopped: the connection that asked for it closed before the answer. */
class PageLeft extends Error {
  constructor(readonly work: string) {
    super(`${work} stopped: the page that asked for it went away`);
  }
}

const cookieOf = (request: IncomingMessage, name: string): string | undefined => {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
};

/** The scheme's name is case-insensitive (RFC 7235): `bearer` and `BEARER` are `Bearer`. */
const bearerOf = (request: IncomingMessage): string | undefined => {
  const header = request.headers.authorization ?? '';
  return /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
};

/** Addresses that listen on every interface. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]']);

/** An address as a Host header names it (an IPv6 one in brackets). */
const asHostName = (address: string): string => (address.includes(':') && !address.startsWith('[') ? `[${address}]` : address);

const send = (response: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': CSP,
    ...headers,
  });
  response.end(body);
};

const json = (response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) =>
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value), headers);

const readJson = (request: IncomingMessage): Promise<Readonly<Record<string, unknown>>> =>
  new Promise((resolve, reject) => {
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      reject(new HttpError(415, "send the body as JSON with 'content-type: application/json'"));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Refused at once; the rest is read and dropped (so the client reads the answer), until the request times out.
      if (size > MAX_BODY_BYTES) {
        chunks.length = 0;
        reject(new HttpError(413, `a request body is at most ${MAX_BODY_BYTES >> 20} MiB`));
        return;
      }
      chunks.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
        resolve(value as Record<string, unknown>);
      } catch {
        reject(new HttpError(400, 'the body is not a JSON object'));
      }
    });
  });

/** With `download=1` a read is an export: saved as `name`.json (anything but letters, digits, `.`, `-` and `_` made `_`). */
const exportHeaders = (url: URL, name: string): Record<string, string> =>
  url.searchParams.get('download') === '1'
    ? { 'content-disposition': `attachment; filename="${name.replace(/[^\w.-]+/g, '_')}.json"` }
    : {};

/** The page a browser gets at / without the token, or with one that is not this web UI's (`wrong`). */
const signInPage = (wrong: boolean): string => `<!doctype html><meta charset="utf-8"><title>Hologram</title><link rel="icon" href="data:,">
<p>${wrong ? "That token is not this web UI's (an old URL, or another data dir's?)." : "This page needs the web UI's token."}
Open the URL <code>homed</code> printed when it started (it ends in <code>?token=…</code>), or read the token
from <code>state/webui/token</code> in the data dir.</p>`;

export class WebuiServer {
  private server: Server | undefined;
  private allowedHosts = new Set<string>();
  /** The port listened on, once it is. */
  private port = 0;

  constructor(private readonly options: WebuiServerOptions) {}

  /** Listens; resolves with the port (the one asked for, or the one the system gave for 0). */
  async listen(): Promise<number> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => this.failed(response, error));
    });
    new ConnectionSlots(MAX_CONNECTIONS).watch(server);
    // Node's own cap only backs ConnectionSlots up: an evicted connection counts until its close event.
    server.maxConnections = 2 * MAX_CONNECTIONS;
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => this.options.log(`web UI server: ${error.message}`));
    const port = (server.address() as AddressInfo).port;
    this.port = port;
    for (const name of ['127.0.0.1', 'localhost', '[::1]', asHostName(this.options.host)]) this.allowedHosts.add(`${name}:${port}`);
    return port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private failed(response: ServerResponse, error: unknown): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const status =
      error instanceof HttpError || error instanceof BadRequest || error instanceof NotFound || error instanceof Unfit
        ? error.status
        : error instanceof TimeTravelBusy
          ? 429
          : 500;
    if (status === 500) this.options.log(`web UI request failed: ${(error as Error)?.message ?? String(error)}`);
    const problems = error instanceof Unfit ? { problems: error.problems } : {};
    json(
      response,
      status,
      { error: (error as Error)?.message ?? String(error), ...problems },
      status === 413 ? { connection: 'close' } : {},
    );
  }

  /**
   * Listening on every address (0.0.0.0, ::), the server answers to this machine's addresses and
   * name as well, read when asked (an address may come later); a name that only resolves here (DNS
   * rebinding) is still refused.
   */
  private machineHosts(): string[] {
    if (!WILDCARD_HOSTS.has(this.options.host)) return [];
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => asHostName(a.address)));
    return [...addresses, hostname()].map((name) => `${name}:${this.port}`);
  }

  private authorised(request: IncomingMessage): boolean {
    return tokenMatches(this.options.token, bearerOf(request) ?? cookieOf(request, COOKIE));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const host = request.headers.host ?? '';
    if (!this.allowedHosts.has(host)) {
      const machine = this.machineHosts();
      if (!machine.includes(host))
        throw new HttpError(421, `this server answers to ${[...this.allowedHosts, ...machine].join(', ')}, not '${host}'`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) throw new HttpError(403, `requests from ${origin} are refused`);
    const url = new URL(request.url ?? '/', `http://${host}`);
    const method = request.method ?? 'GET';
    const given = url.searchParams.get('token');
    if (method === 'GET' && url.pathname === '/' && given !== null) {
      if (!tokenMatches(this.options.token, given)) {
        send(response, 401, 'text/html; charset=utf-8', signInPage(true));
        return;
      }
      send(response, 303, 'text/plain; charset=utf-8', 'signed in', {
        location: '/',
        'set-cookie': `${COOKIE}=${this.options.token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000`,
      });
      return;
    }
    if (!this.authorised(request)) {
      if (method === 'GET' && url.pathname === '/') send(response, 401, 'text/html; charset=utf-8', signInPage(false));
      else throw new HttpError(401, 'sign in first: open the URL homed printed (it carries ?token=…)');
      return;
    }
    await this.route(method, url, request, response);
  }

  /**
   * Answers with what `produce` makes, unless the connection closes first: then its signal is
   * aborted, the work stops at its next read, and the stop is logged (nobody is left to answer).
   */
  private async untilPageLeaves(response: ServerResponse, work: string, produce: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const left = new AbortController();
    const onClose = () => {
      if (!response.writableFinished) left.abort(new PageLeft(work));
    };
    response.once('close', onClose);
    try {
      json(response, 200, await produce(left.signal));
    } catch (error) {
      if (!(left.signal.aborted && error === left.signal.reason)) throw error;
      this.options.log(left.signal.reason.message);
    } finally {
      response.off('close', onClose);
    }
  }

  private async route(method: string, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const { api, assets, live } = this.options;
    const get = async (produce: () => unknown) => json(response, 200, await produce());
    const post = async (produce: (body: Readonly<Record<string, unknown>>) => Promise<unknown>) =>
      json(response, 200, await produce(await readJson(request)));
    const key = `${method} ${url.pathname}`;
    switch (key) {
      case 'GET /':
        return send(response, 200, 'text/html; charset=utf-8', assets.page());
      case 'GET /app.js':
        return send(response, 200, 'text/javascript; charset=utf-8', await assets.script());
      case 'GET /app.css':
        return send(response, 200, 'text/css; charset=utf-8', assets.style());
      case 'GET /api/overview':
        return get(() => api.overview());
      case 'GET /api/conversation':
        return json(response, 200, await api.conversation(url.searchParams), exportHeaders(url, `session-${url.searchParams.get('key')}`));
      case 'GET /api/turn':
        return json(response, 200, await api.turn(url.searchParams), exportHeaders(url, `turn-${url.searchParams.get('id')}`));
      case 'GET /api/events':
        return get(() => api.events(url.searchParams));
      case 'GET /api/approvals':
        return get(() => api.approvals());
      case 'GET /api/plugins':
        return get(() => api.plugins());
      case 'GET /api/machines':
        return get(() => api.machines());
      case 'GET /api/memory':
        return get(() => api.memory(url.searchParams));
      case 'GET /api/recall':
        return get(() => api.recall(url.searchParams));
      case 'GET /api/time':
        return this.untilPageLeaves(response, 'time travel', (signal) => api.timeTravel(url.searchParams, signal));
      case 'POST /api/verify':
        await readJson(request);
        return this.untilPageLeaves(response, 'verify', (signal) => api.verify(signal));
      case 'GET /api/settings':
        return get(() => api.settings());
      case 'POST /api/settings':
        return post((body) => api.saveSettings(body));
      case 'POST /api/secret':
        return post(async (body) => api.setSecret(body));
      case 'POST /api/probe':
        return post((body) => api.probe(body));
      case 'POST /api/plugin':
        return post((body) => api.pluginAction(body));
      case 'GET /api/live': {
        if (live.full) throw new HttpError(503, 'too many live views are open; close a tab and try again');
        const after = String(request.headers['last-event-id'] ?? url.searchParams.get('after') ?? '');
        const afterSeq = after === '' ? 0 : wholeNumberOf(after);
        if (!Number.isSafeInteger(afterSeq)) throw new HttpError(400, "'after' must be a seq (a whole number)");
        live.open(response, afterSeq);
        return;
      }
      case 'POST /api/message':
        return post((body) => api.message(body));
      case 'POST /api/cancel':
        return post((body) => api.cancel(body));
      case 'POST /api/stop':
        return post(() => api.stop());
      case 'POST /api/approve':
        return post((body) => api.approve(body));
      default:
        throw new HttpError(404, `no ${method} ${url.pathname} here`);
    }
  }
}
