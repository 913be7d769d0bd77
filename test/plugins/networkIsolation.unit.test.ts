/**
 * How a subprocess plugin's command is wrapped to keep it off the network: only a plugin without
 * the `network` capability is wrapped; where isolation is unavailable it starts as it is in
 * `isolate` mode and not at all in `require` mode, with what to do.
 */
import { describe, expect, it } from 'vitest';
import { isolatedCommand, type NetworkIsolation } from '../../plugins/host/networkIsolation.ts';
import { parseManifest } from '../../plugins/host/manifest.ts';

const node = { command: '/usr/bin/node', args: ['main.js'] };
const wrap: NetworkIsolation = { kind: 'wrap', command: 'unshare', args: ['--map-current-user', '--net', '--'] };
const unavailable: NetworkIsolation = { kind: 'unavailable', why: 'user namespaces are off here' };

describe('network isolation of a plugin', () => {
  it('wraps a plugin that did not ask for the network, and leaves one that did', () => {
    expect(isolatedCommand('p', false, 'isolate', wrap, node)).toEqual({
      command: 'unshare',
      args: ['--map-current-user', '--net', '--', '/usr/bin/node', 'main.js'],
    });
    expect(isolatedCommand('p', true, 'isolate', wrap, node)).toEqual(node);
    expect(isolatedCommand('p', false, 'off', { kind: 'off' }, node)).toEqual(node);
  });

  it('where it cannot isolate: starts as it is in isolate mode, refuses in require mode with what to do', () => {
    expect(isolatedCommand('p', false, 'isolate', unavailable, node)).toEqual(node);
    expect(() => isolatedCommand('p', false, 'require', unavailable, node)).toThrow(
      /plugin 'p' was not started: .*user namespaces are off here.*add "network" to its capabilities/,
    );
    expect(isolatedCommand('p', true, 'require', unavailable, node)).toEqual(node);
  });

  it('takes network as a capability in a manifest', () => {
    const manifest = parseManifest({ name: 'web', version: '1.0.0', entry: 'main.js', capabilities: ['tools', 'network'] }, 'web');
    expect(manifest.capabilities).toEqual(['tools', 'network']);
  });
});
