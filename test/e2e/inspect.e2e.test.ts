/**
 * `homed --inspect` as a user starts it: the relay listens on this machine only unless
 * `--inspect-host` says otherwise (and then the daemon warns), and a port in use is refused in
 * one line.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, listeningAddresses } from '../support/listeners.ts';
import { testDataDir, useDaemons } from '../support/homedSession.ts';
import { hasNoStackTrace, runHomed } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const daemons = useDaemons();
const tempDir = useTempDir();

describe('homed --inspect', () => {
  it('listens on 127.0.0.1 only, and says so', async () => {
    const port = await freePort();
    const daemon = await daemons.start(testDataDir(tempDir()), { args: ['--inspect', '--inspect-port', String(port)] });
    expect(daemon.output).toContain(`inspector relay on http://127.0.0.1:${port}`);
    expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
    expect(daemon.output).not.toContain('anyone who can reach it');
    await daemons.stop(daemon);
  });

  it('listens on every interface only when --inspect-host asks for it, and warns', async () => {
    const port = await freePort();
    const daemon = await daemons.start(testDataDir(tempDir()), { args: ['--inspect-port', String(port), '--inspect-host', '0.0.0.0'] });
    expect(listeningAddresses(port)).toEqual(['0.0.0.0']);
    expect(daemon.output).toContain(`inspector relay on http://127.0.0.1:${port}`);
    expect(daemon.output).toContain("the inspector relay listens on 0.0.0.0: anyone who can reach it sees every machine's events");
    await daemons.stop(daemon);
  });

  it('refuses a port in use in one line that says how to choose another', async () => {
    const taken = createServer();
    const port = await new Promise<number>((resolve) =>
      taken.listen(0, '127.0.0.1', () => resolve((taken.address() as { port: number }).port)),
    );
    daemons.onCleanup(() => new Promise((resolve) => taken.close(resolve)));
    const result = await runHomed(['run', '--data', testDataDir(tempDir()), '--inspect-port', String(port)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `homed: port ${port} is in use, so the inspector relay cannot start; choose another with --inspect-port N\n`,
    );
    expect(hasNoStackTrace(result.stderr)).toBe(true);
  });
});
