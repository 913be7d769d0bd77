/**
 * The machines: every actor's statechart, drawn here from the layout the daemon made of its
 * machine's definition, with the state it is in now lit, live; and the events flowing between
 * actors. Several actors of one machine (turns, plugin supervisors) share a drawing and a picker.
 */
import { api, type MachineLayout, type MachinesLive, type WatchedActor } from './api.ts';
import { clear, h, time } from './dom.ts';
import type { LiveFeed } from './live.ts';

const SVG = 'http://www.w3.org/2000/svg';
const svg = (tag: string, attributes: Record<string, string | number>, text?: string): SVGElement => {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
};

/** The ids of the states a snapshot value names: `busy` → machine.busy; `{ running: 'llm' }` → machine.running, machine.running.llm. */
export const activeStates = (machine: string, value: unknown): string[] => {
  if (typeof value === 'string') return [`${machine}.${value}`];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => [
    `${machine}.${key}`,
    ...activeStates(`${machine}.${key}`, inner),
  ]);
};

const stateText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export class MachineCard {
  readonly element: HTMLElement;
  private readonly drawing: SVGElement;
  private readonly picker = h('select', { 'aria-label': 'Actor' }) as HTMLSelectElement;
  private readonly summary = h('span', { class: 'machine-summary' });
  private actors: WatchedActor[] = [];

  constructor(readonly layout: MachineLayout) {
    this.drawing = this.draw();
    this.picker.addEventListener('change', () => this.light());
    this.element = h(
      'article',
      { class: 'machine', 'data-machine': layout.machine },
      h('header', {}, h('h2', {}, layout.machine), this.summary, h('label', {}, 'actor ', this.picker)),
      h('div', { class: 'machine-drawing' }, this.drawing),
    );
  }

  update(actors: readonly WatchedActor[]): void {
    this.actors = actors.filter((a) => a.machine === this.layout.machine);
    const chosen = this.picker.value;
    clear(
      this.picker,
      ...this.actors.map((a) =>
        h(
          'option',
          { value: a.sessionId, selected: a.sessionId === chosen },
          `${a.systemId ?? a.id} · ${stateText(a.state)}${a.status === 'active' ? '' : ` (${a.status})`}`,
        ),
      ),
    );
    if (!this.actors.some((a) => a.sessionId === chosen)) {
      const active = this.actors.filter((a) => a.status === 'active');
      this.picker.value = (active.at(-1) ?? this.actors.at(-1))?.sessionId ?? '';
    }
    const running = this.actors.filter((a) => a.status === 'active').length;
    this.summary.textContent = `${running} running, ${this.actors.length - running} ended`;
    this.light();
  }

  private light(): void {
    const actor = this.actors.find((a) => a.sessionId === this.picker.value);
    const lit = new Set(actor ? activeStates(this.layout.machine, actor.state) : []);
    for (const box of this.drawing.querySelectorAll<SVGElement>('[data-state]')) {
      box.classList.toggle('active', lit.has(box.dataset.state ?? ''));
    }
    this.element.dataset.current = actor ? stateText(actor.state) : '';
  }

  private draw(): SVGElement {
    const { layout } = this;
    const root = svg('svg', { viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width, height: layout.height, role: 'img' });
    root.append(svg('title', {}, `statechart of ${layout.machine}`));
    const defs = svg('defs', {});
    const marker = svg('marker', {
      id: `arrow-${layout.machine}`,
      viewBox: '0 0 10 10',
      refX: 9,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse',
    });
    marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
    defs.append(marker);
    root.append(defs);
    for (const state of layout.states) {
      const group = svg('g', { 'data-state': state.id, class: `state state-${state.kind}${state.initial ? ' initial' : ''}` });
      group.append(svg('rect', { x: state.x, y: state.y, width: state.width, height: state.height, rx: 6 }));
      const compound = layout.states.some((s) => s !== state && s.id.startsWith(`${state.id}.`));
      group.append(
        svg(
          'text',
          {
            x: state.x + (compound ? 8 : state.width / 2),
            y: state.y + (compound ? 16 : state.height / 2 + 4),
            'text-anchor': compound ? 'start' : 'middle',
          },
          state.label,
        ),
      );
      root.append(group);
    }
    for (const edge of layout.transitions) {
      if (edge.points.length < 2) continue;
      // An eventless transition (taken as soon as its guard holds) is drawn dashed and unlabelled:
      // a machine has many, and 'always' on each buried the states under their labels.
      const eventless = edge.label === 'always';
      root.append(
        svg('polyline', {
          points: edge.points.map((p) => p.join(',')).join(' '),
          class: eventless ? 'transition eventless' : 'transition',
          'marker-end': `url(#arrow-${layout.machine})`,
        }),
      );
      if (eventless) continue;
      const [x, y] = edge.points[Math.floor(edge.points.length / 2)]!;
      root.append(svg('text', { x: x + 3, y: y - 3, class: 'transition-label' }, edge.label));
    }
    return root;
  }
}

export class MachinesView {
  readonly element = h('section', { class: 'machines', 'aria-label': 'Machines' });
  private readonly cards = new Map<string, MachineCard>();
  private readonly list = h('div', { class: 'machine-list' });
  private readonly flow = h('ol', { class: 'flow', 'aria-label': 'Latest events between actors' });
  private loading: Promise<void> | undefined;

  constructor(live: LiveFeed) {
    this.element.append(this.list, h('aside', { class: 'flow-box' }, h('h2', {}, 'Events between actors'), this.flow));
    live.machines((view) => void this.update(view));
  }

  async show(): Promise<void> {
    const { layouts, actors, events } = await api.machines();
    this.add(layouts);
    this.apply({ actors, events });
  }

  private add(layouts: readonly MachineLayout[]): void {
    for (const layout of layouts) {
      if (this.cards.has(layout.machine)) continue;
      const card = new MachineCard(layout);
      this.cards.set(layout.machine, card);
      this.list.append(card.element);
    }
  }

  private async update(view: MachinesLive): Promise<void> {
    // A machine that had not run yet (the first turn's) is laid out by the daemon once; fetch it then.
    if (view.actors.some((a) => a.machine !== null && !this.cards.has(a.machine))) {
      this.loading ??= api.machines().then(({ layouts }) => {
        this.add(layouts);
        this.loading = undefined;
      });
      await this.loading;
    }
    this.apply(view);
  }

  private apply(view: MachinesLive): void {
    for (const card of this.cards.values()) card.update(view.actors);
    clear(
      this.flow,
      ...view.events
        .slice(-40)
        .reverse()
        .map((e) => h('li', {}, h('span', { class: 'at' }, time(e.at)), ` ${e.from ?? 'journal'} → ${e.to}: `, h('code', {}, e.type))),
    );
  }
}
