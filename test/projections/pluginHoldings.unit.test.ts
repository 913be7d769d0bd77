/** What a plugin holds as `homed plugins` shows it, live or from the log: one function for both. */
import { describe, expect, it } from 'vitest';
import { emptyPluginRegistry, foldPluginRegistry, holdingsOf } from '../../projections/plugins/pluginRegistry.ts';

describe('holdingsOf', () => {
  it("lists a plugin's tools, its stages with own-tools handlers marked, and its channels, and nothing of another plugin's", () => {
    const events = [
      { type: 'PluginToolRegistered', data: { plugin: 'gate', name: 'lookup', description: '', parameters: {} } },
      {
        type: 'PluginStageRegistered',
        data: { plugin: 'gate', handlerId: 'gate/before_toolcall/1', stage: 'before_toolcall', scope: 'global' },
      },
      {
        type: 'PluginStageRegistered',
        data: { plugin: 'gate', handlerId: 'gate/after_toolcall/2', stage: 'after_toolcall', scope: 'own_tools' },
      },
      { type: 'PluginChannelRegistered', data: { plugin: 'gate', name: 'chat', capabilities: 1, metaDoc: '' } },
      { type: 'PluginToolRegistered', data: { plugin: 'other', name: 'echo', description: '', parameters: {} } },
    ];
    const registry = events.reduce(foldPluginRegistry, emptyPluginRegistry());
    expect(holdingsOf(registry, 'gate')).toEqual({
      tools: ['lookup'],
      stages: ['before_toolcall', 'after_toolcall (own tools)'],
      channels: ['chat'],
    });
    expect(holdingsOf(registry, 'nobody')).toEqual({ tools: [], stages: [], channels: [] });
  });

  it('says why a plugin last failed while it is not running, and not once it runs again', () => {
    const crashed = [
      { type: 'PluginStarting', data: { plugin: 'gate', attempt: 0 } },
      { type: 'PluginStarted', data: { plugin: 'gate', pid: 10 } },
      { type: 'PluginCrashed', data: { plugin: 'gate', exitCode: 7, signal: null, crashCount: 4, at: 1 } },
      { type: 'PluginGaveUp', data: { plugin: 'gate', crashes: 4, firstCrashAt: 1, at: 2 } },
    ].reduce(foldPluginRegistry, emptyPluginRegistry());
    expect(holdingsOf(crashed, 'gate').lastError).toBe('exited with code 7');
    const running = foldPluginRegistry(crashed, { type: 'PluginStarted', data: { plugin: 'gate', pid: 11 } });
    expect(holdingsOf(running, 'gate')).not.toHaveProperty('lastError');
  });
});
