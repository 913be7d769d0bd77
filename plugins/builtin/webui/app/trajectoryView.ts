/**
 * A turn's trajectory: how it was scheduled, then each thing that happened in it (the input,
 * every LLM request and answer with its latency and tokens, each tool call and result, what the
 * memory recorded and moved, and the output), on one timeline from the turn's first event. Each step opens to its event's JSON.
 */
import { api } from './api.ts';
import type { LoggedEvent } from './chatFold.ts';
import { clear, h, json, time } from './dom.ts';
import type { LiveFeed } from './live.ts';

type Data = Record<string, unknown>;

/** A step's line: the event's data up to a length, an ellipsis saying there is more (the whole is one click away). */
const brief = (text: string, max = 160): string => (text.length > max ? `${text.slice(0, max)}…` : text);

const summary = (event: LoggedEvent, requestedAt: Map<number, number>): string => {
  const d = (event.data ?? {}) as Data;
  switch (event.type) {
    case 'TurnRequested':
      return `input: ${String(d.input)} (model ${String(d.model)}, at most ${String(d.maxRounds)} rounds)`;
    case 'LlmRequested':
      requestedAt.set(Number(d.round), event.at);
      return `round ${String(d.round)}: asked the model with ${String(d.total)} messages`;
    case 'LlmAnswerRecorded': {
      const answer = (d.answer ?? {}) as Data;
      const usage = (answer.usage ?? {}) as Data;
      const started = requestedAt.get(Number(d.round));
      const latency = started === undefined ? '' : `, ${event.at - started} ms`;
      const tokens = usage.outputTokens === undefined ? '' : `, ${String(usage.inputTokens)} in / ${String(usage.outputTokens)} out tokens`;
      const calls = Array.isArray(answer.toolCalls) ? answer.toolCalls.length : 0;
      return `round ${String(d.round)}: ${String(d.source)} answered${latency}${tokens}${calls ? `, ${calls} tool call(s)` : ''}`;
    }
    case 'LlmChunkRecorded':
      return `streamed: ${JSON.stringify(d.text)}`;
    case 'ToolCalled':
      return `called ${String(d.name)} ${JSON.stringify(d.args)}`;
    case 'ToolResultRecorded':
      return `${String(d.name)} returned ${String(d.content).length} characters${d.isError ? ' (an error)' : ''}`;
    case 'OutputSent':
      return `sent (${String(d.kind)}): ${String(d.text)}`;
    case 'TurnCompleted':
      return `ended: ${String(d.outcome)}${Number(d.rounds) > 0 ? ` after ${String(d.rounds)} tool round(s)` : ''}`;
    case 'ContextEventAppended': {
      const entered = (d.event ?? {}) as Data;
      return `memory: ${String(entered.role)} entered L1 context of ${String(d.scope)}: ${String(entered.text ?? '').slice(0, 120)}`;
    }
    case 'ContextEventsSunk':
      return `memory: ${Array.isArray(d.docs) ? (d.docs as { events?: unknown[] }[]).reduce((n, doc) => n + (doc.events?.length ?? 0), 0) : '?'} event(s) sank to L2 cold context (${String(d.reason)})`;
    default:
      return Object.keys(d).length ? brief(JSON.stringify(d)) : '';
  }
};

/** How long the view waits after new events of its turn before it reads the turn again. */
const REFRESH_MS = 300;

export class TrajectoryView {
  readonly element = h('section', { class: 'trajectory', 'aria-label': 'Trajectory' });
  private shown: string | undefined;
  /** The step whose event is open, kept when the view reads the turn again. */
  private selected: number | undefined;
  private refresh: ReturnType<typeof setTimeout> | undefined;

  /** Live: while a turn is shown, new events of it, its task or its memory read it again. */
  constructor(live: LiveFeed) {
    live.events((events) => {
      const turn = this.shown;
      if (!turn || !this.element.isConnected) return;
      if (!events.some((e) => e.stream === `turn-${turn}` || e.stream === 'memory' || e.stream === 'scheduler')) return;
      clearTimeout(this.refresh);
      this.refresh = setTimeout(() => void this.draw(turn).catch(() => undefined), REFRESH_MS);
    });
  }

  async show(turnId: string): Promise<void> {
    this.shown = turnId;
    this.selected = undefined;
    clear(this.element, h('p', {}, 'Loading…'));
    await this.draw(turnId);
  }

  private async draw(turnId: string): Promise<void> {
    const turn = await api.turn(turnId);
    if (turnId !== this.shown) return;
    const all = [...turn.scheduler, ...turn.events, ...turn.memory].sort((a, b) => a.seq - b.seq);
    const start = all[0]?.at ?? 0;
    const open = all.find((e) => e.seq === this.selected);
    const detail = h('pre', { class: 'event-json' }, open ? json(open) : 'Select a step to see its event.');
    const requestedAt = new Map<number, number>();
    const select = (event: LoggedEvent): void => {
      this.selected = event.seq;
      detail.textContent = json(event);
    };
    const steps = all
      .filter((event) => event.type !== 'LlmChunkRecorded')
      .map((event) =>
        h(
          'li',
          {
            class: `step step-${event.type}`,
            tabindex: 0,
            role: 'button',
            onclick: () => select(event),
            onkeydown: (e: Event) => {
              const key = (e as KeyboardEvent).key;
              if (key !== 'Enter' && key !== ' ') return;
              e.preventDefault();
              select(event);
            },
          },
          h('span', { class: 'at' }, `+${event.at - start} ms`),
          h('span', { class: 'type' }, event.type),
          h('span', { class: 'what' }, summary(event, requestedAt)),
        ),
      );
    const chunks = all.filter((e) => e.type === 'LlmChunkRecorded').length;
    clear(
      this.element,
      h(
        'header',
        { class: 'trajectory-bar' },
        h('h2', {}, `Turn ${turnId.slice(0, 8)}`),
        h('span', {}, `started ${time(start)} · ${all.length} events${chunks ? ` (${chunks} streamed pieces)` : ''}`),
        h('a', { href: `/api/turn?id=${encodeURIComponent(turnId)}&download=1`, download: `turn-${turnId}.json` }, 'Export JSON'),
      ),
      h('div', { class: 'events-body' }, h('ol', { class: 'timeline' }, steps), detail),
    );
  }
}
