/**
 * `homed --inspect`: a relay for the Stately inspector on 127.0.0.1 (another host only when
 * asked, with `--inspect-host`). The daemon's actors send their inspection events to it; a
 * browser at its address shows them live in the Stately inspector (whose UI loads from stately.ai).
 */
import type { createWebSocketInspector } from '@statelyai/inspect';
import { HologramError } from '../../events/index.ts';
import { startRelay } from './inspectorRelay.ts';

export class InspectorUnavailable extends HologramError {
  readonly code = 'INSPECTOR_UNAVAILABLE';
}

export const DEFAULT_INSPECT_PORT = 4242;
export const DEFAULT_INSPECT_HOST = '127.0.0.1';

export type RunningInspector = Readonly<{
  url: string;
  /** True when the relay listens on more than this machine. */
  exposed: boolean;
  inspect: ReturnType<typeof createWebSocketInspector>['inspect'];
  stop(): void;
}>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const ANY = new Set(['0.0.0.0', '::', '']);

const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);

export const startInspector = async (port = DEFAULT_INSPECT_PORT, host = DEFAULT_INSPECT_HOST): Promise<RunningInspector> => {
  const relay = await startRelay(host, port).catch((error: NodeJS.ErrnoException) => {
    throw new InspectorUnavailable(
      error.code === 'EADDRINUSE'
        ? `port ${port} is in use, so the inspector relay cannot start; choose another with --inspect-port N`
        : `the inspector relay cannot listen on ${host}:${port} (${error.code ?? error.message}); check --inspect-host and --inspect-port`,
      { cause: error },
    );
  });
  // The daemon reaches its own relay over loopback when it listens everywhere.
  const local = ANY.has(host) ? (host === '::' ? '::1' : '127.0.0.1') : host;
  // The package loads only for --inspect: a daemon without it does not pay for it.
  const { createWebSocketInspector: inspectorOf } = await import('@statelyai/inspect');
  const inspector = inspectorOf({ url: `ws://${urlHost(local)}:${relay.port}` });
  return {
    url: `http://${urlHost(local)}:${relay.port}`,
    exposed: !LOOPBACK.has(host),
    inspect: inspector.inspect,
    stop: () => {
      inspector.stop();
      relay.close();
    },
  };
};
