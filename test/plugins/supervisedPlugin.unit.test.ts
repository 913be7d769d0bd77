/**
 * One supervised plugin against a start the test controls: what the supervisor does with a
 * process that comes up after it was told to stop.
 */
import { describe, expect, it } from 'vitest';
import { createDefaultCatalog, InMemoryEventStore, SequentialIds, VirtualClock } from '../../events/index.ts';
import type { PluginHub } from '../../plugins/host/pluginHub.ts';
import type { InstanceExit, RunningInstance } from '../../plugins/host/pluginStarters.ts';
import { SupervisedPlugin } from '../../plugins/host/supervisedPlugin.ts';
import { createManualTimers } from '../support/manualTimers.ts';

/** A plugin whose start resolves only when the test says, and which records being asked to stop. */
const givenSlowStart = () => {
  let comeUp!: (instance: RunningInstance) => void;
  const started = new Promise<RunningInstance>((resolve) => (comeUp = resolve));
  let exit!: (how: InstanceExit) => void;
  const exited = new Promise<InstanceExit>((resolve) => (exit = resolve));
  const stops: number[] = [];
  const instance: RunningInstance = {
    pid: 4242,
    exited,
    stop: async () => {
      stops.push(stops.length);
      exit({ exitCode: 0, signal: null });
    },
  };
  const hub = { observe: () => undefined, detach: async () => undefined, scrub: <T>(value: T) => value } as unknown as PluginHub;
  const clock = new VirtualClock(1_000);
  const plugin = new SupervisedPlugin({
    name: 'slowstart',
    stream: 'plugin-slowstart:1',
    store: new InMemoryEventStore(createDefaultCatalog(), clock, new SequentialIds('e')),
    clock,
    hub,
    start: () => started,
    enabled: true,
    timers: createManualTimers(),
    log: () => undefined,
    fail: (error) => {
      throw error;
    },
  });
  return { plugin, comeUp: () => comeUp(instance), stops };
};

describe('a supervised plugin', () => {
  it('told to stop while it is still starting, stops the process once it is up, and the stop completes', async () => {
    const { plugin, comeUp, stops } = givenSlowStart();
    await plugin.send('START');
    expect(plugin.state).toBe('starting');
    const stopping = plugin.shutdown();
    await plugin.until((state) => state === 'stopping');
    comeUp();
    await stopping;
    expect(stops).toHaveLength(1);
    expect(plugin.state).toBe('stopped');
  }, 10_000);
});
