/**
 * The built-in cli plugin: a Unix socket in the data dir where `waiter` (or anything speaking
 * the cli wire) sends messages, presses stop, and lists tools and plugins. Each connection is
 * a session: its messages are injected as inputs whose reply comes back to it on the `cli`
 * channel, streamed. A stale socket left by a killed daemon is replaced; a live one is not.
 * At most MAX_CLI_CLIENTS sessions at once (one more is told `busy`); each is bounded on its
 * own (cliSession.ts), so no client can take the daemon down.
 */
import { existsSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { OWNER, PERSON_LEVEL } from '../../../actors/index.ts';
import { type Clock, HologramError, type Timers } from '../../../events/index.ts';
import type { BuiltinPlugin, KernelControl } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import type { ChannelDelivery, PluginApi } from '../../sdk/pluginApi.ts';
import { CliSession, closeWith, errorReply } from './cliSession.ts';
import {
  ANONYMOUS,
  CLI_SOCKET_FILE,
  type CliReply,
  type CliRequest,
  cliTarget,
  formatBytes,
  MAX_CLI_CLIENTS,
  MAX_LINE_BYTES,
  parseCliTarget,
} from './cliWire.ts';
import { HeldReplies } from './heldReplies.ts';
import { refusalLog } from './refusalLog.ts';

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
  capabilities: ['channels', 'input', 'interrupt'],
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

const busy = (): CliReply =>
  errorReply('busy', `homed already serves ${MAX_CLI_CLIENTS} cli clients, the most it takes at once; close one (or wait) and try again`);

export const startCli = async (
  api: PluginApi,
  socketPath: string,
  control: KernelControl | undefined,
  timers: Timers,
  clock: Clock,
): Promise<{ stop(): Promise<void> }> => {
  const sessions = new Map<string, CliSession>();
  // Session ids differ from one start to the next, so a reply routed to a session of an earlier
  // start (a reminder set before a restart) is never taken for the session that now has its number.
  const boot = clock.now().toString(36);
  let nextSession = 1;
  const held = new HeldReplies();
  /** Where a delivery goes: its session if still connected, else every session of its user; no target: everyone. */
  const receivers = (target: string | null): CliSession[] => {
    if (target === null) return [...sessions.values()];
    const named = parseCliTarget(target);
    if (named === undefined) return [];
    const own = sessions.get(named.session);
    return own?.live ? [own] : [...sessions.values()].filter((session) => session.live && session.from === named.from);
  };
  const replyOf = (delivery: ChannelDelivery): CliReply => {
    const inputId = delivery.inputId ? { inputId: delivery.inputId } : {};
    switch (delivery.kind) {
      case 'chunk':
        return { type: 'chunk', text: delivery.text, ...inputId };
      case 'tool':
        return { type: 'tool', name: delivery.text, ...inputId };
      case 'end':
        return {
          type: 'end',
          text: delivery.text,
          ...(delivery.outcome ? { outcome: delivery.outcome } : {}),
          ...(delivery.stoppedFor ? { stoppedFor: delivery.stoppedFor } : {}),
          ...inputId,
        };
      case 'message':
        return { type: 'message', text: delivery.text, ...inputId, ...(delivery.approval ? { approval: delivery.approval } : {}) };
    }
  };
  await api.registerOutputChannel(
    {
      name: CLI_CHANNEL,
      capabilities: ['text', 'progress'],
      metaDoc: 'no routing: a message goes to every connected waiter; send {}',
    },
    (delivery: ChannelDelivery) => {
      const reply = replyOf(delivery);
      const named = delivery.target === null ? undefined : parseCliTarget(delivery.target);
      const targets = receivers(delivery.target);
      // No session of its user is open: what it says waits for the next one.
      if (targets.length === 0 && named !== undefined) held.hold(named.from, delivery);
      else held.delivered(delivery);
      for (const session of targets) {
        session.send(reply);
        if (delivery.kind === 'end' && named?.session === session.id) session.replyEnded();
      }
    },
  );
  const serve = async (request: CliRequest, id: string): Promise<CliReply> => {
    const session = sessions.get(id);
    switch (request.type) {
      case 'hello': {
        const from = request.from ?? session?.from ?? ANONYMOUS;
        if (session) session.from = from;
        // What came for this user while no session was open follows the welcome.
        const waiting = session ? held.take(from) : [];
        if (waiting.length > 0)
          timers.setTimer(() => {
            for (const text of waiting) session!.send({ type: 'message', text: `(while you were away) ${text}` });
          }, 0);
        return { type: 'welcome', session: id, conversation: `${CLI_CHANNEL}:${from}`, models: control?.models() ?? [] };
      }
      case 'message': {
        const from = request.from ?? session?.from ?? ANONYMOUS;
        if (session && session.from === undefined) session.from = from;
        const { inputId } = await api.injectInterrupt(
          {
            text: request.text,
            replyTo: { channel: CLI_CHANNEL, target: cliTarget(from, id) },
            conversation: `${CLI_CHANNEL}:${from}`,
            // Whoever reaches the socket (0600, in the private data dir) is the user at the machine.
            principal: OWNER,
          },
          PERSON_LEVEL,
        );
        return { type: 'accepted', inputId };
      }
      case 'cancel':
        if (!control) throw new Error('this kernel gives the cli no stop button');
        return { type: 'cancelled', inputId: request.inputId, stopped: await control.cancel(request.inputId) };
      case 'stop':
        if (!control) throw new Error('this kernel gives the cli no stop button');
        return { type: 'stopped', ...(await control.stop()) };
      case 'tools':
        return { type: 'tools', tools: control?.tools() ?? [] };
      case 'plugins':
        return { type: 'plugins', plugins: control?.plugins() ?? [] };
      case 'plugin':
        if (!control) throw new Error('this kernel gives the cli no plugin control');
        return { type: 'plugin', plugin: await control.pluginAction(request.action, request.name, manifest.name) };
      case 'approvals':
        return {
          type: 'approvals',
          pending: (control?.approvals() ?? []).map(({ approval, name, callId, conversation, args }) => ({
            approval,
            name,
            callId,
            conversation,
            ...(args ? { args } : {}),
          })),
        };
      case 'approve': {
        if (!control) throw new Error('this kernel gives the cli no approvals');
        const { approval, approved, reason } = request;
        await control.answerApproval({ approval, approved, by: session?.from ?? OWNER, ...(reason ? { reason } : {}) });
        return { type: 'answered', approval, approved };
      }
    }
  };
  const host = { serve, log: (line: string) => api.log(line), timers };
  const refusals = refusalLog(api);
  // allowHalfOpen: a client that half-closes after its request still gets the whole reply.
  const server: Server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (socket) => {
    if (sessions.size >= MAX_CLI_CLIENTS) {
      refusals.refused();
      closeWith(socket, busy(), timers);
      return;
    }
    refusals.accepted();
    const id = `${boot}-s${nextSession++}`;
    const session = new CliSession(id, socket, host);
    sessions.set(id, session);
    socket.once('close', () => sessions.delete(id));
    socket.resume();
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
  // An accept that fails refuses that one connection, never the daemon. (Out of descriptors, libuv
  // itself accepts and closes the connection: the client is told its connection was closed.)
  server.on('error', (error: NodeJS.ErrnoException) => refusals.failed(error));
  api.log(`listening on ${socketPath} (at most ${MAX_CLI_CLIENTS} clients, request lines up to ${formatBytes(MAX_LINE_BYTES)})`);
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions.values()) session.close();
      }),
  };
};

export const cliPlugin: BuiltinPlugin = {
  manifest,
  start: (api, env) => startCli(api, join(env.dataDir, CLI_SOCKET_FILE), env.control, env.timers, env.clock),
};
