/**
 * `homed --inspect`: a local relay for the Stately inspector. The daemon's actors send
 * their inspection events to ws://localhost:PORT; a browser at http://localhost:PORT shows
 * them live in the Stately inspector (whose UI loads from stately.ai).
 */
import { createServer } from 'node:net';
import { createWebSocketInspector } from '@statelyai/inspect';
import { createInspectorServer } from '@statelyai/inspect/server';
import { HologramError } from '../../events/index.ts';

export class InspectorUnavailable extends HologramError {
  readonly code = 'INSPECTOR_UNAVAILABLE';
}

export const DEFAULT_INSPECT_PORT = 4242;

const portIsFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });

export type RunningInspector = Readonly<{
  url: string;
  inspect: ReturnType<typeof createWebSocketInspector>['inspect'];
  stop(): void;
}>;

export const startInspector = async (port = DEFAULT_INSPECT_PORT): Promise<RunningInspector> => {
  if (!(await portIsFree(port))) {
    throw new InspectorUnavailable(`port ${port} is in use, so the inspector relay cannot start; choose another with --inspect-port N`);
  }
  const server = createInspectorServer({ port, autoOpen: false });
  const inspector = createWebSocketInspector({ url: `ws://localhost:${port}` });
  return {
    url: `http://localhost:${port}`,
    inspect: inspector.inspect,
    stop: () => {
      inspector.stop();
      server.stop();
    },
  };
};
