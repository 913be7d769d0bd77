/**
 * Plugins off the network, below the tools: a subprocess plugin whose manifest does not ask for
 * the `network` capability runs in a network namespace of its own, so a tool that opens a socket
 * without declaring it (the proxy cannot see that) reaches nothing, not even this machine's
 * loopback; the same tool in a plugin granted `network` connects. With
 * `security.sandbox.pluginNetwork: "require"` on a machine that cannot isolate (no `unshare` on
 * the PATH here), such a plugin does not start, and the daemon says why.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { testDataDir, useDaemons, verifyReplay } from '../support/homedSession.ts';
import { startLlmServer } from '../support/llmServer/index.ts';
import { messagesOf } from '../support/llmServer/recordedMessages.ts';
import { finished, spawnNode, WAITER } from '../support/processes.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const daemons = useDaemons();
const canIsolate = spawnSync('unshare', ['--map-current-user', '--net', 'true']).status === 0;

describe('plugins without the network capability', () => {
  it.skipIf(!canIsolate)('reach no address, loopback included; a plugin granted network connects', async () => {
    const server = await startLlmServer([]);
    daemons.onCleanup(() => server.close());
    server.setScript([
      {
        toolCalls: [
          { id: 'isolated', name: 'prober_connect', arguments: { port: server.port } },
          { id: 'granted', name: 'netprober_connect', arguments: { port: server.port } },
        ],
      },
      { text: 'probed' },
    ]);
    const dir = testDataDir(tempDir(), { llm: server, plugins: ['prober', 'netprober'] });
    const daemon = await daemons.start(dir);
    const reply = await finished(spawnNode([WAITER, '--data', dir, 'probe the network']));
    expect(reply.stdout).toBe('probed\n');
    const results = Object.fromEntries(
      messagesOf(server.requests[1]!)
        .filter((m) => m.role === 'tool')
        .map((m) => [(m as { tool_call_id?: string }).tool_call_id, m.content]),
    );
    expect(results.isolated).toMatch(/^failed: (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|EACCES)/);
    expect(results.granted).toBe('connected');
    await daemons.stop(daemon);
    await verifyReplay(dir);
  });

  it('in "require" mode, does not start one when this machine cannot isolate it, and says why', async () => {
    const dir = testDataDir(tempDir(), {
      plugins: ['prober', 'netprober'],
      settings: { security: { sandbox: { pluginNetwork: 'require' } } },
    });
    const daemon = await daemons.start(dir, { env: { PATH: '/nonexistent' } });
    expect(daemon.output).toContain('plugins without the "network" capability will not start');
    const listed = await finished(spawnNode([WAITER, '--data', dir, '--plugins'], { env: { ...process.env } }));
    const text = listed.stdout + listed.stderr + daemon.output;
    expect(text).toMatch(/prober[^\n]*(failed|gave up|stopped|crashed)/);
    expect(text).toMatch(/netprober[^\n]*running/);
    await daemons.stop(daemon);
  });
});
