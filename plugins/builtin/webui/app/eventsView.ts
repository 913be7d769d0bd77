/**
 * The live event log: every committed event as it arrives, filterable by type or stream, each
 * row opening to its JSON. Rows are added once per animation frame and only the newest
 * MAX_ROWS stay in the page, so a burst of thousands of events a second never freezes it.
 */
import type { LoggedEvent } from './chatFold.ts';
import { clear, h, json, time } from './dom.ts';
import type { LiveFeed } from './live.ts';

export const MAX_ROWS = 1_000;

export class EventsView {
  readonly element = h('section', { class: 'events', 'aria-label': 'Event log' });
  private readonly rows = h('tbody', {});
  private readonly detail = h('pre', { class: 'event-json', 'aria-live': 'polite' }, 'Select an event to see its JSON.');
  private readonly counter = h('span', { class: 'counter', 'aria-live': 'off' }, '0 events');
  private readonly filter = h('input', {
    type: 'search',
    placeholder: 'filter: type or stream',
    'aria-label': 'Filter events by type or stream',
  }) as HTMLInputElement;
  private readonly pause = h('input', { type: 'checkbox', id: 'events-pause' }) as HTMLInputElement;
  private readonly kept: LoggedEvent[] = [];
  private pending: LoggedEvent[] = [];
  private received = 0;
  private frame = false;

  constructor(live: LiveFeed) {
    this.filter.addEventListener('input', () => this.redraw());
    this.element.append(
      h('div', { class: 'events-bar' }, this.filter, h('label', { for: 'events-pause' }, this.pause, ' pause'), this.counter),
      h(
        'div',
        { class: 'events-body' },
        h(
          'div',
          { class: 'events-table' },
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, h('th', {}, 'seq'), h('th', {}, 'time'), h('th', {}, 'stream'), h('th', {}, 'type'))),
            this.rows,
          ),
        ),
        this.detail,
      ),
    );
    live.events((events) => this.add(events));
  }

  /** Events read before the feed started (the log's tail), oldest first. */
  seed(events: readonly LoggedEvent[]): void {
    this.add(events);
  }

  private add(events: readonly LoggedEvent[]): void {
    this.received += events.length;
    for (const event of events) this.pending.push(event);
    if (this.pending.length > MAX_ROWS) this.pending = this.pending.slice(-MAX_ROWS);
    if (this.frame) return;
    this.frame = true;
    requestAnimationFrame(() => this.flush());
  }

  private matches(event: LoggedEvent): boolean {
    const wanted = this.filter.value.trim().toLowerCase();
    return wanted === '' || event.type.toLowerCase().includes(wanted) || event.stream.toLowerCase().includes(wanted);
  }

  private row(event: LoggedEvent): HTMLElement {
    return h(
      'tr',
      {
        tabindex: 0,
        'data-seq': event.seq,
        onclick: () => this.select(event),
        onkeydown: (e: Event) => (e as KeyboardEvent).key === 'Enter' && this.select(event),
      },
      h('td', {}, String(event.seq)),
      h('td', {}, time(event.at)),
      h('td', {}, event.stream),
      h('td', {}, event.type),
    );
  }

  private select(event: LoggedEvent): void {
    clear(this.detail, h('a', { href: `#/time/${event.seq}`, class: 'travel' }, `Time travel to seq ${event.seq}`), '\n', json(event));
  }

  private flush(): void {
    this.frame = false;
    this.counter.textContent = `${this.received} events`;
    const batch = this.pending;
    this.pending = [];
    for (const event of batch) this.kept.push(event);
    if (this.kept.length > MAX_ROWS) this.kept.splice(0, this.kept.length - MAX_ROWS);
    if (this.pause.checked) return;
    const fragment = document.createDocumentFragment();
    for (const event of batch) if (this.matches(event)) fragment.prepend(this.row(event));
    this.rows.prepend(fragment);
    while (this.rows.childElementCount > MAX_ROWS) this.rows.lastElementChild?.remove();
  }

  private redraw(): void {
    clear(
      this.rows,
      ...this.kept
        .filter((e) => this.matches(e))
        .reverse()
        .map((e) => this.row(e)),
    );
  }
}
