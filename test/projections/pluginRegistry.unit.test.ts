/** The restarts `homed plugins` shows, given/when/then over the registry fold: counted since the plugin was last started fresh. */
import { describe, expect, it } from 'vitest';
import type { AnyEvent } from '../../events/index.ts';
import { emptyPluginRegistry, foldPluginRegistry, type PluginRegistry } from '../../projections/plugins/pluginRegistry.ts';

const plugin = 'flaky';
let at = 0;
const fact = (type: string, data: Record<string, unknown> = {}) => ({ type, data: { plugin, at: ++at, ...data } }) as unknown as AnyEvent;

const starting = (attempt: number) => fact('PluginStarting', { attempt });
const started = () => fact('PluginStarted');
const crashed = (crashCount: number) => fact('PluginCrashed', { exitCode: 1, signal: null, crashCount });
const restarting = (attempt: number) => fact('PluginRestarting', { attempt, delayMs: attempt * 1_000 });

/** Started at boot, then three crashes each restarted, then the fourth: the supervisor gives up. */
const GAVE_UP = [
  starting(0),
  started(),
  ...[1, 2, 3].flatMap((n) => [crashed(n), restarting(n), starting(n), started()]),
  crashed(4),
  fact('PluginGaveUp', { crashes: 4, firstCrashAt: 0 }),
];

const given = (...events: AnyEvent[]): PluginRegistry => events.reduce(foldPluginRegistry, emptyPluginRegistry());
const entry = (registry: PluginRegistry) => registry.plugins.get(plugin)!;

describe('restarts of a plugin', () => {
  it('count each restart after a crash', () => {
    expect(entry(given(...GAVE_UP))).toMatchObject({ state: 'gaveUp', restarts: 3, crashes: 4 });
  });

  it('are back to 0 when a person starts it again after it gave up (its crash window starts fresh)', () => {
    const restarted = given(...GAVE_UP, starting(0), started());
    expect(entry(restarted)).toMatchObject({ state: 'running', restarts: 0, crashes: 4 });
  });

  it('are not reset by a restart the supervisor made itself', () => {
    const again = given(starting(0), started(), crashed(1), restarting(1), starting(1), started());
    expect(entry(again)).toMatchObject({ state: 'running', restarts: 1 });
  });

  it('count again from 0 after the fresh start', () => {
    const later = given(...GAVE_UP, starting(0), started(), crashed(1), restarting(1), starting(1));
    expect(entry(later)).toMatchObject({ state: 'starting', restarts: 1, crashes: 5 });
  });
});
