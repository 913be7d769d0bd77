/** The plugins: each one's kind, state, restarts and what it registered, with its controls. */
import { api, type PluginSummary } from './api.ts';
import { clear, h } from './dom.ts';

/** The controls that do something for a plugin as it is: stop and reload while it runs (or is starting or waiting to restart), start otherwise; disable or enable. */
export const actionsFor = (plugin: Pick<PluginSummary, 'state' | 'enabled'>): string[] => {
  // A refused folder is no plugin: nothing to start or enable until it is fixed and homed restarted.
  if (plugin.state === 'refused') return [];
  const live = ['running', 'starting', 'backoff'].includes(plugin.state);
  return [...(plugin.enabled ? (live ? ['reload', 'stop'] : ['start']) : []), plugin.enabled ? 'disable' : 'enable'];
};

export class PluginsView {
  readonly element = h('section', { class: 'plugins', 'aria-label': 'Plugins' });
  private readonly notice = h('p', { class: 'notice', role: 'status' });

  async show(): Promise<void> {
    const { plugins } = await api.plugins();
    this.render(plugins);
  }

  private async act(action: string, name: string): Promise<void> {
    try {
      const { plugin } = await api.pluginAction(action, name);
      this.notice.textContent = `${plugin.name}: ${plugin.state}${plugin.enabled ? '' : ' (disabled)'}`;
    } catch (error) {
      this.notice.textContent = `${name}: ${(error as Error).message}`;
    }
    await this.show();
  }

  private render(plugins: readonly PluginSummary[]): void {
    clear(
      this.element,
      h('h2', {}, 'Plugins'),
      this.notice,
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['plugin', 'kind', 'state', 'restarts', 'pid', 'registered', ''].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          plugins.map((p) =>
            h(
              'tr',
              { 'data-plugin': p.name },
              h('td', {}, h('strong', {}, p.name), ` ${p.version}`),
              h('td', {}, p.kind),
              h('td', { class: 'plugin-state' }, `${p.state}${p.enabled ? '' : ' (disabled)'}`),
              h('td', {}, String(p.restarts)),
              h('td', {}, p.pid === null ? (p.kind === 'builtin' ? 'in homed' : '—') : String(p.pid)),
              h(
                'td',
                {},
                [
                  ...p.tools,
                  ...p.stages.map((s) => `stage ${s}`),
                  ...p.channels.map((c) => `channel ${c}`),
                  ...(p.stagesDetached ? [`stages detached: ${p.stagesDetached} (reload to let it register them again)`] : []),
                  ...(p.toolsDetached ? [`tools detached: ${p.toolsDetached} (reload to let it register them again)`] : []),
                  ...(p.lastError ? [`last failure: ${p.lastError}`] : []),
                  ...(p.refused ? [`not loaded: ${p.refused} (fix it, then restart homed)`] : []),
                ].join(', '),
              ),
              h(
                'td',
                { class: 'actions' },
                actionsFor(p).map((action) => h('button', { type: 'button', onclick: () => void this.act(action, p.name) }, action)),
              ),
            ),
          ),
        ),
      ),
    );
  }
}
