/**
 * How a plugin list reads on a terminal: one line per plugin (kind, state, restarts, pid), then
 * what it holds. Pure, and free of the event log, so waiter's bundle does not carry SQLite.
 */
import type { PluginSummary } from '../plugins/sdk/builtinPlugin.ts';

export const formatPlugins = (plugins: readonly PluginSummary[]): string =>
  `${plugins
    .map((p) => {
      const held = [
        p.tools.length ? `tools: ${p.tools.join(', ')}` : '',
        p.stages.length ? `stages: ${p.stages.join(', ')}` : '',
        p.channels.length ? `channels: ${p.channels.join(', ')}` : '',
      ].filter(Boolean);
      const pid = p.pid ? ` pid ${String(p.pid)}` : '';
      return `${String(p.name).padEnd(12)} ${String(p.kind).padEnd(10)} ${String(p.state).padEnd(9)}${p.enabled ? '' : ' (disabled)'} restarts ${String(p.restarts)}${pid}${held.length ? `\n  ${held.join('\n  ')}` : ''}`;
    })
    .join('\n')}\n`;
