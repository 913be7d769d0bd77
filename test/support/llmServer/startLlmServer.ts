/**
 * A real HTTP server on 127.0.0.1 that answers as OpenAI, Anthropic or Ollama from a script.
 * Every request is recorded before it is answered, and a client that goes away is noticed and timed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { anthropicFormat } from './anthropicFormat.ts';
import { ollamaFormat } from './ollamaFormat.ts';
import { openAiFormat } from './openAiFormat.ts';
import { resolveReply } from './resolveReply.ts';
import { ScriptQueue } from './scriptQueue.ts';
import type {
  LlmServer,
  LlmServerOptions,
  Protocol,
  RecordedRequest,
  RequestOutcome,
  Script,
  ScriptedCompletion,
  ScriptedError,
} from './types.ts';
import type { WireFormat } from './wireFormat.ts';

const defaultErrorMessages: Record<number, string> = {
  400: 'bad request (scripted by llmServer)',
  401: 'invalid API key (scripted by llmServer)',
  403: 'permission denied (scripted by llmServer)',
  404: 'model not found (scripted by llmServer)',
  429: 'rate limit exceeded (scripted by llmServer)',
  500: 'internal server error (scripted by llmServer)',
  529: 'overloaded (scripted by llmServer)',
};

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(parts).toString('utf8')));
  });

/**
 * Start the server on an ephemeral port. Replies come from `script` in order (see {@link Script}).
 *
 * @example
 * const llm = await startLlmServer([{ text: 'Hello there' }]);
 * const res = await fetch(`${llm.baseUrl('openai')}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
 * await llm.close();
 */
export const startLlmServer = async (script: Script = [], options: LlmServerOptions = {}): Promise<LlmServer> => {
  const prefix = `/${(options.openAiPrefix ?? '/v1').replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  const routes = new Map<string, WireFormat>([
    [`${prefix}/chat/completions`, openAiFormat],
    ['/v1/messages', anthropicFormat],
    ['/api/chat', ollamaFormat],
  ]);
  const queue = new ScriptQueue(script);
  const requests: RecordedRequest[] = [];
  const watchers = new Set<() => void>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  /** Streams waiting at their `holdAfterChunks`, each let go by calling it. */
  const held = new Set<() => void>();
  let answers = 0;
  let closing = false;

  const changed = () => {
    for (const watch of [...watchers]) watch();
  };
  const until = <T>(ready: () => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const check = () => {
        const value = ready();
        if (value === undefined) return;
        watchers.delete(check);
        resolve(value);
      };
      watchers.add(check);
      check();
    });

  const finish = (
    record: RecordedRequest,
    res: ServerResponse,
    outcome: RequestOutcome,
    status: number,
    json?: unknown,
    headers: Readonly<Record<string, string>> = {},
  ) => {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(json === undefined ? undefined : JSON.stringify(json), () => {
      record.outcome = outcome;
      record.finishedAt = performance.now();
      changed();
    });
  };

  /** Resolves after `ms`, or at once when the response closes. */
  const pause = (ms: number, res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        timers.delete(timer);
        res.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timers.add(timer);
      res.once('close', done);
    });

  /** Resolves once `release()` is called, or at once when the response closes. */
  const hold = (res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        held.delete(done);
        res.off('close', done);
        resolve();
      };
      held.add(done);
      res.once('close', done);
    });

  const write = (res: ServerResponse, frame: string): Promise<void> =>
    new Promise((resolve) => {
      res.once('close', resolve);
      res.write(frame, () => {
        res.off('close', resolve);
        resolve();
      });
    });

  const complete = async (record: RecordedRequest, res: ServerResponse, format: WireFormat, scripted: ScriptedCompletion) => {
    answers += 1;
    const reply = resolveReply(scripted, record.body, record.rawBody, answers);
    const delay = scripted.slow?.chunkDelayMs ?? 0;
    const cut = () => {
      record.outcome = 'disconnected';
      record.finishedAt = performance.now();
      res.destroy();
      changed();
    };
    if (!record.stream) {
      if (delay > 0) await pause(delay, res);
      if (record.outcome !== 'pending') return;
      if (scripted.disconnectAfterChunks !== undefined) return cut();
      return finish(record, res, 'completed', 200, format.body(reply));
    }
    record.status = 200;
    res.writeHead(200, { 'content-type': format.streamContentType, 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    for (const frame of format.frames(reply)) {
      if (record.chunksWritten > 0 && delay > 0) await pause(delay, res);
      if (record.outcome !== 'pending' || res.destroyed) return;
      if (record.chunksWritten === scripted.holdAfterChunks) await hold(res);
      if (record.outcome !== 'pending' || res.destroyed) return;
      if (record.chunksWritten === scripted.disconnectAfterChunks) return cut();
      await write(res, frame);
      record.chunksWritten += 1;
      changed();
    }
    if (record.outcome !== 'pending' || res.destroyed) return;
    res.end(() => {
      record.outcome = 'completed';
      record.finishedAt = performance.now();
      changed();
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBody = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const format = req.method === 'POST' ? routes.get(path) : undefined;
    let body: unknown;
    let parseError: string | undefined;
    try {
      body = rawBody.length > 0 ? JSON.parse(rawBody) : undefined;
      if (format !== undefined && (typeof body !== 'object' || body === null)) parseError = 'the body must be a JSON object';
    } catch (error) {
      parseError = (error as Error).message;
    }
    const streamField = (body as { stream?: unknown } | undefined)?.stream;
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      rawBody,
      protocol: format?.protocol,
      stream: format !== undefined && (typeof streamField === 'boolean' ? streamField : format.streamsByDefault),
      receivedAt: performance.now(),
      reply: undefined,
      status: undefined,
      outcome: 'pending',
      chunksWritten: 0,
    };
    requests.push(record);
    res.on('close', () => {
      if (record.outcome === 'pending' && !res.writableFinished && !closing) {
        record.outcome = 'aborted';
        record.abortedAt = performance.now();
      }
      changed();
    });
    changed();

    if (req.method === 'GET' && (path === `${prefix}/models` || path === '/v1/models' || path === '/api/tags')) {
      // What `homed init` lists: the models this server serves.
      const listing =
        path === '/api/tags'
          ? { models: [{ name: options.models?.[0] ?? 'test-model' }] }
          : { data: (options.models ?? ['test-model']).map((id) => ({ id })) };
      return finish(record, res, 'completed', 200, listing);
    }
    if (format === undefined) {
      const known = [...routes.keys()].map((route) => `POST ${route}`).join(', ');
      return finish(record, res, 'notFound', 404, { error: `llmServer: nothing at ${record.method} ${path}; it serves ${known}` });
    }
    if (parseError !== undefined) {
      return finish(record, res, 'badRequest', 400, format.error(400, `llmServer: the request body is not valid JSON: ${parseError}`));
    }
    const taken = queue.take(record);
    if ('exhausted' in taken) return finish(record, res, 'exhausted', 500, format.error(500, taken.exhausted));
    const reply = taken.reply;
    record.reply = reply;
    if ('hang' in reply) return;
    if ('status' in reply) return sendError(record, res, format, reply);
    return complete(record, res, format, reply);
  };

  const sendError = (record: RecordedRequest, res: ServerResponse, format: WireFormat, reply: ScriptedError) => {
    const message = reply.message ?? defaultErrorMessages[reply.status] ?? `error ${reply.status} (scripted by llmServer)`;
    finish(record, res, 'error', reply.status, reply.body ?? format.error(reply.status, message), reply.headers);
  };

  const server = createServer((req, res) => void handle(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    port,
    baseUrl: (protocol: Protocol) => (protocol === 'openai' ? `${url}${prefix}` : url),
    requests,
    setScript: (next) => queue.replace(next),
    release: () => {
      for (const done of [...held]) done();
    },
    settled: (index) => until(() => (requests[index]?.outcome === 'pending' ? undefined : requests[index])),
    received: (count) => until(() => (requests.length >= count ? requests : undefined)),
    close: async () => {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
};
