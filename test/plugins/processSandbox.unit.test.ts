/**
 * How a subprocess plugin's command is wrapped in its sandbox: always its own mount namespace
 * with the daemon's files hidden, its own network namespace unless it asked for `network`;
 * where the machine cannot sandbox, it starts as it is in `isolate` mode and not at all in
 * `require` mode, with what to do.
 */
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../plugins/host/manifest.ts';
import { sandboxedCommand, type SandboxSupport } from '../../plugins/host/processSandbox.ts';

const node = { command: '/usr/bin/node', args: ['main.js'] };
const available: SandboxSupport = { kind: 'available' };
const unavailable: SandboxSupport = { kind: 'unavailable', why: 'user namespaces are off here' };
// Paths that do not exist are left out of what is mounted (a bind needs its target).
const hidden = { dirs: ['/', '/no/such/dir'], files: ['/dev/null', '/no/such/file'] };

describe("a plugin process's sandbox", () => {
  it('wraps every plugin, with its own network only when it did not ask for one, hiding what exists', () => {
    const isolated = sandboxedCommand('p', false, 'isolate', available, hidden, node);
    expect(isolated.command).toBe('unshare');
    expect(isolated.args.slice(0, 5)).toEqual(['--map-current-user', '--mount', '--net', '--', '/bin/sh']);
    expect(isolated.args.slice(isolated.args.indexOf('sh'))).toEqual(['sh', '1', '/', '1', '/dev/null', '/usr/bin/node', 'main.js']);
    const granted = sandboxedCommand('p', true, 'isolate', available, hidden, node);
    expect(granted.args.slice(0, 3)).toEqual(['--map-current-user', '--mount', '--']);
  });

  it('where it cannot sandbox: starts as it is in isolate mode, refuses in require mode with what to do; off is off', () => {
    expect(sandboxedCommand('p', false, 'isolate', unavailable, hidden, node)).toEqual(node);
    expect(() => sandboxedCommand('p', false, 'require', unavailable, hidden, node)).toThrow(
      /plugin 'p' was not started: .*user namespaces are off here.*set security.sandbox.plugins to "isolate"/,
    );
    expect(sandboxedCommand('p', false, 'off', { kind: 'off' }, hidden, node)).toEqual(node);
  });

  it('takes network as a capability in a manifest', () => {
    const manifest = parseManifest({ name: 'web', version: '1.0.0', entry: 'main.js', capabilities: ['tools', 'network'] }, 'web');
    expect(manifest.capabilities).toEqual(['tools', 'network']);
  });
});
