/**
 * The built-in cli plugin: a Unix socket in the data dir where `waiter` (or anything speaking
 * the cli wire) sends messages, presses stop, and lists tools and plugins. Each connection is
 * a session: its messages are injected as inputs whose reply comes back to it on the `cli`
 * channel, streamed. A stale socket left by a killed daemon is replaced; a live one is not.
 */
import { existsSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HologramError } from '../../../events/index.ts';
import type { BuiltinPlugin, KernelControl } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import type { ChannelDelivery, PluginApi } from '../../sdk/pluginApi.ts';
import { CLI_SOCKET_FILE, parseCliRequest, type CliReply, type CliRequest } from './cliWire.ts';

export const CLI_CHANNEL = 'cli';

export class CliSocketBusy extends HologramError {
  readonly code = 'CLI_SOCKET_BUSY';
  constructor(path: string) {
    super(`another homed already listens on ${path}; stop it first, or use another --data dir`);
  }
}

const manifest: PluginManifest = {
  name: 'cli',
  version: '1.0.0',
  entry: 'builtin:cli',
  kind: 'builtin',
  platforms: [],
  requires_facilities: [],
  capabilities: ['channels', 'input'],
  auto_start: true,
  auto_restart: true,
  description: 'The command line: a Unix socket for waiter',
};

const isListening = (path: string): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });

const send = (socket: Socket, reply: CliReply): void => {
  if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
};

export const startCli = async (
  api: PluginApi,
  socketPath: string,
  control: KernelControl | undefined,
): Promise<{ stop(): Promise<void> }> => {
  const sessions = new Map<string, Socket>();
  let nextSession = 1;
  await api.registerOutputChannel(
    { name: CLI_CHANNEL, capabilities: ['text'], metaDoc: 'no routing: a message goes to every connected waiter; send {}' },
    (delivery: ChannelDelivery) => {
      const targets = delivery.target ? [sessions.get(delivery.target)] : [...sessions.values()];
      for (const socket of targets) {
        if (!socket) continue;
        send(
          socket,
          delivery.kind === 'chunk'
            ? { type: 'chunk', text: delivery.text }
            : delivery.kind === 'end'
              ? { type: 'end', text: delivery.text, ...(delivery.outcome ? { outcome: delivery.outcome } : {}) }
              : { type: 'message', text: delivery.text },
        );
      }
    },
  );
  const serve = async (socket: Socket, session: string, request: CliRequest): Promise<void> => {
    switch (request.type) {
      case 'message': {
        const { inputId } = await api.injectInput({
          text: request.text,
          replyTo: { channel: CLI_CHANNEL, target: session },
          conversation: `${CLI_CHANNEL}:${request.from ?? 'local'}`,
        });
        return send(socket, { type: 'accepted', inputId });
      }
      case 'stop':
        if (!control) throw new Error('this kernel gives the cli no stop button');
        await control.stop();
        return send(socket, { type: 'stopped' });
      case 'tools':
        return send(socket, { type: 'tools', tools: control?.tools() ?? [] });
      case 'plugins':
        return send(socket, { type: 'plugins', plugins: control?.plugins() ?? [] });
      case 'plugin':
        if (!control) throw new Error('this kernel gives the cli no plugin control');
        return send(socket, { type: 'plugin', plugin: await control.pluginAction(request.action, request.name) });
    }
  };
  const server: Server = createServer((socket) => {
    const session = `s${nextSession++}`;
    sessions.set(session, socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sessions.delete(session));
    const lines = createInterface({ input: socket });
    lines.on('error', () => socket.destroy()); // a client gone mid-write (EPIPE, ECONNRESET) ends its session, never the daemon
    lines.on('line', (line) => {
      if (!line.trim()) return;
      const request = parseCliRequest(line);
      if ('error' in request) return send(socket, { type: 'error', message: request.error });
      serve(socket, session, request).catch((error: unknown) => send(socket, { type: 'error', message: (error as Error).message }));
    });
  });
  if (existsSync(socketPath)) {
    if (await isListening(socketPath)) throw new CliSocketBusy(socketPath);
    unlinkSync(socketPath);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  api.log(`listening on ${socketPath}`);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sessions.values()) socket.end();
        server.close(() => resolve());
        for (const socket of sessions.values()) socket.destroy();
      }),
  };
};

export const cliPlugin: BuiltinPlugin = {
  manifest,
  start: (api, env) => startCli(api, join(env.dataDir, CLI_SOCKET_FILE), env.control),
};
