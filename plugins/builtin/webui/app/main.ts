/** The web UI's page: a header with the views, and the view the address names (#/chat/KEY, #/events, #/turn/ID). */
import { api } from './api.ts';
import { ChatView } from './chatView.ts';
import { clear, h } from './dom.ts';
import { EventsView } from './eventsView.ts';
import { LiveFeed } from './live.ts';
import { MachinesView } from './machinesView.ts';
import { MemoryView } from './memoryView.ts';
import { PluginsView } from './pluginsView.ts';
import { SettingsView } from './settingsView.ts';
import { TimeView } from './timeView.ts';
import { TrajectoryView } from './trajectoryView.ts';

/** How much of the log's tail the event view starts with. */
const SEEDED_EVENTS = 200;

const boot = async (): Promise<void> => {
  const root = document.getElementById('app')!;
  const overview = await api.overview();
  const live = new LiveFeed();
  const chat = new ChatView(live);
  const events = new EventsView(live);
  const trajectory = new TrajectoryView(live);
  const machines = new MachinesView(live);
  const settings = new SettingsView();
  const plugins = new PluginsView();
  const timeTravel = new TimeView();
  const memory = new MemoryView();
  const status = h('span', { class: 'status', role: 'status' }, 'connecting…');
  const nav = h(
    'nav',
    { class: 'views', 'aria-label': 'Views' },
    h('a', { href: '#/chat', 'data-view': 'chat' }, 'Chat'),
    h('a', { href: '#/events', 'data-view': 'events' }, 'Events'),
    h('a', { href: '#/machines', 'data-view': 'machines' }, 'Machines'),
    h('a', { href: '#/time', 'data-view': 'time' }, 'Time travel'),
    h('a', { href: '#/memory', 'data-view': 'memory' }, 'Memory'),
    h('a', { href: '#/plugins', 'data-view': 'plugins' }, 'Plugins'),
    h('a', { href: '#/settings', 'data-view': 'settings' }, 'Settings'),
  );
  const main = h('main', {});
  const models = overview.models.map((m) => `${m.name} (${m.model})`).join(', ') || 'no model configured';
  root.append(h('header', { class: 'top' }, h('h1', {}, 'Hologram'), nav, h('span', { class: 'models' }, models), status), main);
  live.connection((connected) => {
    status.textContent = connected ? 'live' : 'reconnecting…';
    status.dataset.connected = String(connected);
  });
  const tail = await api.events(Math.max(1, overview.head - SEEDED_EVENTS + 1), SEEDED_EVENTS);
  events.seed(tail.events);
  live.start(tail.head);
  // For a person at the console (and the browser test): the page's live feed.
  (globalThis as unknown as { hologram: unknown }).hologram = { live };

  const route = async (): Promise<void> => {
    const [, view = 'chat', arg = ''] = location.hash.split('/');
    for (const link of nav.querySelectorAll('a')) {
      link.toggleAttribute('aria-current', link.dataset.view === view);
    }
    if (view === 'events') clear(main, events.element);
    else if (view === 'memory') {
      clear(main, memory.element);
      await memory.show(chat.conversation || undefined);
    } else if (view === 'time') {
      clear(main, timeTravel.element);
      await timeTravel.show(arg ? Number(arg) : undefined);
    } else if (view === 'settings') {
      clear(main, settings.element);
      await settings.show();
    } else if (view === 'plugins') {
      clear(main, plugins.element);
      await plugins.show();
    } else if (view === 'machines') {
      clear(main, machines.element);
      await machines.show();
    } else if (view === 'turn' && arg) {
      clear(main, trajectory.element);
      await trajectory.show(decodeURIComponent(arg));
    } else {
      clear(main, chat.element);
      const fresh = await api.overview();
      await chat.show(
        arg ? decodeURIComponent(arg) : (fresh.conversations.find((c) => c.key.startsWith('webui:'))?.key ?? fresh.defaultConversation),
        fresh.conversations,
        fresh.approvals,
      );
    }
  };
  addEventListener('hashchange', () => void route().catch(showError));
  await route();
};

const showError = (error: unknown): void => {
  const root = document.getElementById('app')!;
  root.prepend(h('p', { class: 'error', role: 'alert' }, `The web UI could not load: ${(error as Error).message}`));
};

void boot().catch(showError);
