/** The protocol over a real child's stdio: a plugin started with `node --import tsx`, as the host will. */
import { afterEach, describe, expect, it } from 'vitest';
import { PluginRequestFailed } from '../../plugins/protocol/index.ts';
import { childPeer, type PluginChild } from './pair.ts';
import { REPO } from '../support/processes.ts';

const children: PluginChild[] = [];

const startPlugin = (fixture: string) => {
  const plugin = childPeer(['--import', 'tsx', `${REPO}test/fixtures/plugins/${fixture}`], { cwd: REPO });
  children.push(plugin.child);
  return plugin;
};

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('a plugin subprocess', () => {
  it('says hello, answers echo, notifies, fails with a code, and leaves on bye', async () => {
    const plugin = startPlugin('echoPlugin.ts');
    const hello = await plugin.connection.awaitHello({ timeoutMs: 20_000, capabilities: ['echo'] }).catch((e: unknown) => {
      throw new Error(`${String(e)}\nstderr: ${plugin.stderr()}`);
    });
    expect(hello).toMatchObject({ plugin: 'echo', version: '0.1.0', protocol: 1 });

    const payload = { text: 'héllo', bytes: Buffer.from([1, 2, 3]), n: 2 ** 40, list: [null, true, 1.5] };
    expect(await plugin.connection.request('echo', payload, { timeoutMs: 10_000 })).toEqual(payload);
    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => plugin.connection.request('echo', i, { timeoutMs: 10_000 })));
    expect(many).toEqual(Array.from({ length: 200 }, (_, i) => i));

    const notified = new Promise((resolve) => plugin.connection.onNotify((method, params) => resolve([method, params])));
    expect(await plugin.connection.request('notifyBack', 'ping', { timeoutMs: 10_000 })).toBe('sent');
    expect(await notified).toEqual(['echoed', 'ping']);

    const failure = await plugin.connection.request('fail', null, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PluginRequestFailed);
    expect(failure).toMatchObject({ remoteCode: 'ASKED_TO_FAIL' });
    await expect(plugin.connection.request('nope', null, { timeoutMs: 10_000 })).rejects.toMatchObject({ remoteCode: 'METHOD_NOT_FOUND' });

    plugin.connection.close('test done');
    expect(await plugin.exited).toBe(0);
    expect(plugin.errors).toEqual([]);
  });

  it('reports the garbage a plugin writes before its hello, answers what it can, and still works', async () => {
    const plugin = startPlugin('garbagePlugin.ts');
    const hello = await plugin.connection.awaitHello({ timeoutMs: 20_000 }).catch((e: unknown) => {
      throw new Error(`${String(e)}\nstderr: ${plugin.stderr()}`);
    });
    expect(hello.plugin).toBe('garbage');
    expect(plugin.errors.map((e) => e.code)).toEqual([
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'UNKNOWN_MESSAGE_TYPE',
      'MALFORMED_FRAME',
    ]);
    expect(await plugin.connection.request('echo', 'after the garbage', { timeoutMs: 10_000 })).toBe('after the garbage');
    plugin.connection.close('test done');
    expect(await plugin.exited).toBe(0);
    // The kernel answered the two frames that carried ids; the plugin had no such requests and said so.
    expect(plugin.stderr()).toMatch(/UNMATCHED_RESPONSE.*41/);
    expect(plugin.stderr()).toMatch(/UNMATCHED_RESPONSE.*42/);
  });
});
