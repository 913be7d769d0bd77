/**
 * The daemon's log of connections the cli socket turned away, one line per burst rather than
 * one per connection: a thousand clients beyond the limit, or a run of accept failures (out of
 * descriptors), say so once when it starts and once, with the count, when it is over.
 */
import type { PluginApi } from '../../sdk/pluginApi.ts';
import { MAX_CLI_CLIENTS } from './cliWire.ts';

export type RefusalLog = Readonly<{
  /** A connection beyond MAX_CLI_CLIENTS was told `busy`. */
  refused(): void;
  /** The server could not accept a connection (EMFILE, ENFILE…). */
  failed(error: NodeJS.ErrnoException): void;
  /** A connection was accepted: a burst of refusals is over. */
  accepted(): void;
}>;

export const refusalLog = (api: Pick<PluginApi, 'log'>): RefusalLog => {
  let busy = 0;
  const failures = new Map<string, number>();
  return {
    refused() {
      if (busy++ === 0) api.log(`refusing cli clients: ${MAX_CLI_CLIENTS} are connected, the most served at once`);
    },
    failed(error) {
      const code = error.code ?? error.message;
      const seen = failures.get(code) ?? 0;
      failures.set(code, seen + 1);
      if (seen === 0) {
        api.log(
          `cannot accept cli connections (${code}: ${error.message})${code === 'EMFILE' || code === 'ENFILE' ? '; the daemon is out of file descriptors: raise its limit (ulimit -n) or close clients' : ''}`,
        );
      }
    },
    accepted() {
      if (busy > 0) api.log(`accepting cli clients again; ${busy} were refused as busy`);
      for (const [code, count] of failures) api.log(`accepting cli connections again; ${count} failed with ${code}`);
      busy = 0;
      failures.clear();
    },
  };
};
