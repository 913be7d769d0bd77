/**
 * Time travel: pick a seq (the slider, the number, a step back or forward, or an event's link
 * in the log view) and see the event there, every actor's state then (replayed from its
 * journal), drawn on its machine's statechart as the machines view draws the live one, and every
 * projection (rebuilt up to it). Verify runs homed replay --verify from
 * the page and shows each first divergence, the recorded and the re-decided event side by side.
 * The daemon runs one time travel or verify at a time and queues one more: a step taken while it
 * is busy says so and keeps what is shown, and a step taken before the last one was answered
 * cancels that one (the daemon then drops its work).
 */
import { type ActorAt, api, isBusy, type MachineLayout, type StateAt, type VerifyResult, type WatchedActor } from './api.ts';
import { clear, h, json } from './dom.ts';
import { MachineCard } from './machinesView.ts';

/** An actor at a seq as the machines' cards take one: replayed, so it was running then. */
const asWatched = (actor: ActorAt): WatchedActor => ({
  sessionId: actor.actor,
  id: actor.actor,
  systemId: actor.actor,
  machine: actor.machine,
  state: actor.state,
  status: 'active',
  events: actor.messages,
  lastEvent: null,
  updatedAt: 0,
});

const stateText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export class TimeView {
  readonly element = h('section', { class: 'time', 'aria-label': 'Time travel' });
  private readonly slider = h('input', { type: 'range', min: 1, max: 1, value: 1, 'aria-label': 'Seq' }) as HTMLInputElement;
  private readonly number = h('input', {
    type: 'number',
    min: 1,
    value: 1,
    'aria-label': 'Seq number',
    class: 'seq-number',
  }) as HTMLInputElement;
  private readonly body = h('div', { class: 'time-body', 'aria-live': 'polite' });
  private readonly verifyBox = h('div', { class: 'verify', 'aria-live': 'polite' });
  /** Why the last step did not move the view (the daemon was busy); empty otherwise. */
  private readonly notice = h('p', { class: 'notice failed time-notice', role: 'status' });
  /** The step waiting for its answer: a newer one aborts it. */
  private pending: AbortController | undefined;
  private readonly drawings = h('div', { class: 'machine-list time-machines' });
  /** The statecharts, laid out once by the daemon (the same layouts the machines view draws). */
  private cards: Promise<Map<string, MachineCard>> | undefined;
  private asked = 0;

  constructor() {
    this.slider.addEventListener('change', () => void this.go(Number(this.slider.value)));
    this.slider.addEventListener('input', () => {
      this.number.value = this.slider.value;
    });
    this.number.addEventListener('change', () => void this.go(Number(this.number.value)));
    this.element.append(
      h(
        'div',
        { class: 'time-bar' },
        h(
          'button',
          {
            type: 'button',
            class: 'step-back',
            'aria-label': 'One event back',
            onclick: () => void this.go(Number(this.number.value) - 1),
          },
          '◀',
        ),
        this.slider,
        h(
          'button',
          {
            type: 'button',
            class: 'step-forward',
            'aria-label': 'One event forward',
            onclick: () => void this.go(Number(this.number.value) + 1),
          },
          '▶',
        ),
        h('label', {}, 'seq ', this.number),
        h('button', { type: 'button', class: 'run-verify', onclick: () => void this.verify() }, 'Run verify'),
      ),
      this.notice,
      this.verifyBox,
      this.body,
    );
  }

  async show(seq?: number): Promise<void> {
    await this.go(seq ?? Number.MAX_SAFE_INTEGER);
  }

  private async go(seq: number): Promise<void> {
    const ticket = ++this.asked;
    this.pending?.abort();
    const pending = new AbortController();
    this.pending = pending;
    this.element.dataset.loading = 'true';
    try {
      const at = await api.timeAt(Math.max(1, Math.floor(seq) || 1), pending.signal);
      if (ticket !== this.asked) return;
      this.notice.textContent = '';
      this.render(at);
      await this.draw(at);
    } catch (error) {
      if (ticket !== this.asked) return; // a newer step cancelled this one
      if (isBusy(error)) this.notice.textContent = `Not moved: ${error.message}`;
      else clear(this.body, h('p', { class: 'error', role: 'alert' }, `Could not travel there: ${(error as Error).message}`));
    } finally {
      if (ticket === this.asked) {
        delete this.element.dataset.loading;
        this.pending = undefined;
      }
    }
  }

  private async draw(at: StateAt): Promise<void> {
    this.cards ??= api.machines().then(
      ({ layouts }) => new Map(layouts.map((layout: MachineLayout) => [layout.machine, new MachineCard(layout)])),
      (error: unknown) => {
        this.cards = undefined; // asked again on the next step
        throw error;
      },
    );
    const cards = await this.cards;
    const watched = at.actors.map(asWatched);
    const shown = [...cards.values()].filter((card) => watched.some((a) => a.machine === card.layout.machine));
    for (const card of shown) card.update(watched);
    clear(this.drawings, ...shown.map((card) => card.element));
  }

  private render(at: StateAt): void {
    this.slider.max = String(at.head);
    this.slider.value = String(at.seq);
    this.number.max = String(at.head);
    this.number.value = String(at.seq);
    this.element.dataset.seq = String(at.seq);
    clear(
      this.body,
      h('h2', {}, `At seq ${at.seq} of ${at.head}`),
      at.event
        ? h('details', { open: true }, h('summary', {}, `${at.event.type} on ${at.event.stream}`), h('pre', {}, json(at.event)))
        : null,
      h('h3', {}, 'Actors'),
      h(
        'table',
        { class: 'actors-at' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['actor', 'machine', 'state', 'messages', ''].map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          at.actors.map((a) =>
            h(
              'tr',
              { 'data-actor': a.actor },
              h('td', {}, a.actor),
              h('td', {}, a.machine),
              h('td', { class: 'actor-state' }, stateText(a.state)),
              h('td', {}, String(a.messages)),
              h('td', {}, a.diverged ? h('span', { class: 'failed' }, 'diverged') : ''),
            ),
          ),
        ),
      ),
      h('h3', {}, 'Statecharts then'),
      this.drawings,
      h('h3', {}, 'Projections'),
      ...Object.entries(at.projections).map(([name, dump]) =>
        h('details', { class: 'projection', 'data-projection': name }, h('summary', {}, name), h('pre', {}, json(dump))),
      ),
    );
  }

  private async verify(): Promise<void> {
    clear(this.verifyBox, h('p', {}, 'Verifying: every projection rebuilt, every journal re-delivered…'));
    let result: VerifyResult;
    try {
      result = await api.verify();
    } catch (error) {
      clear(this.verifyBox, h('p', { class: 'failed' }, `Verify could not run: ${(error as Error).message}`));
      return;
    }
    const divergences = result.journals.filter((j) => j.divergence);
    const projections = result.projections.filter((p) => p.status === 'diverged');
    clear(
      this.verifyBox,
      h(
        'p',
        { class: result.first ? 'failed verify-summary' : 'ok verify-summary' },
        result.first
          ? `Diverged: first ${result.first}`
          : `Every projection (${result.projections.length}) and every journal (${result.journals.length}) matches the log.`,
      ),
      ...projections.map((p) => h('p', { class: 'failed' }, `${p.projection}: ${p.detail ?? ''}`)),
      ...divergences.map((j) =>
        h(
          'div',
          { class: 'divergence' },
          h('h4', {}, `${j.journal} diverged at seq `, h('a', { href: `#/time/${j.divergence!.seq}` }, String(j.divergence!.seq))),
          h(
            'div',
            { class: 'side-by-side' },
            h('div', {}, h('h5', {}, 'recorded'), h('pre', {}, json(j.divergence!.expected))),
            h('div', {}, h('h5', {}, 'this build decides'), h('pre', {}, json(j.divergence!.actual))),
          ),
        ),
      ),
      result.notes.length ? h('p', { class: 'muted' }, result.notes.join('; ')) : null,
    );
  }
}
