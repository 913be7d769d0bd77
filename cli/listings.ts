/**
 * How the daemon's tools and plugins read on a terminal (waiter, its chat session, `homed
 * plugins`). Pure, and free of the event log, so waiter's bundle does not carry SQLite.
 */
import { oneVisibleLine } from '../events/visibleControls.ts';
import type { PluginSummary } from '../plugins/sdk/builtinPlugin.ts';

/** How much of a plugin's last failure a listing shows, and how much of that is its end (what to do, where the reason says it). */
const LAST_ERROR_SHOWN = 300;
const LAST_ERROR_END_SHOWN = 100;

/** One line per tool: its name, its plugin, what it does. */
export const formatTools = (tools: readonly Readonly<{ name: string; plugin: string; description: string }>[]): string =>
  tools.length === 0
    ? 'no tools registered\n'
    : tools.map((t) => `${t.name.padEnd(28)} ${t.plugin.padEnd(12)} ${t.description}\n`).join('');

/** One line per plugin (kind, state, restarts, pid), then what it holds. */
export const formatPlugins = (plugins: readonly PluginSummary[]): string =>
  `${plugins
    .map((p) => {
      const held = [
        p.tools.length ? `tools: ${p.tools.join(', ')}` : '',
        p.stages.length ? `stages: ${p.stages.join(', ')}` : '',
        p.channels.length ? `channels: ${p.channels.join(', ')}` : '',
        p.stagesDetached ? `stages detached: ${p.stagesDetached}; 'homed plugins reload ${p.name}' lets it register them again` : '',
        p.toolsDetached ? `tools detached: ${p.toolsDetached}; 'homed plugins reload ${p.name}' lets it register them again` : '',
        p.lastError ? `last failure: ${oneVisibleLine(p.lastError, LAST_ERROR_SHOWN, LAST_ERROR_END_SHOWN)}` : '',
        // Said once: a manifest's reason says already to restart homed once it is fixed.
        p.refused
          ? `not loaded: ${p.refused.replaceAll('\n', '\n  ')}${/restart homed/.test(p.refused) ? '' : '\n  fix it, then restart homed'}`
          : '',
      ].filter(Boolean);
      const pid = p.pid ? ` pid ${String(p.pid)}` : '';
      return `${String(p.name).padEnd(12)} ${String(p.kind).padEnd(10)} ${String(p.state).padEnd(9)}${p.enabled || p.refused ? '' : ' (disabled)'} restarts ${String(p.restarts)}${pid}${held.length ? `\n  ${held.join('\n  ')}` : ''}`;
    })
    .join('\n')}\n`;
