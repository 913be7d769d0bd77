/**
 * The memory: L1 (the conversation's working context), L2 (cold docs), L3 (the knowledge
 * graph's relations) and the scenes, and a recall through the agent's own recall path, each
 * item with its tier and score.
 */
import { api, type MemoryBrowse } from './api.ts';
import { clear, h, time } from './dom.ts';

const table = (headers: readonly string[], rows: readonly (readonly string[])[], empty: string): HTMLElement =>
  rows.length === 0
    ? h('p', { class: 'muted' }, empty)
    : h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            headers.map((t) => h('th', {}, t)),
          ),
        ),
        h(
          'tbody',
          {},
          rows.map((r) =>
            h(
              'tr',
              {},
              r.map((c) => h('td', {}, c)),
            ),
          ),
        ),
      );

export class MemoryView {
  readonly element = h('section', { class: 'memory', 'aria-label': 'Memory' });
  private readonly results = h('div', { class: 'recall-results', 'aria-live': 'polite' });
  private scope: string | undefined;

  /** `conversation`: the one the chat shows, opened when no scope was picked here yet and its memory holds anything. */
  async show(conversation?: string): Promise<void> {
    let memory = await api.memory(this.scope);
    if (this.scope === undefined && conversation && memory.scope !== conversation && memory.scopes.includes(conversation)) {
      memory = await api.memory(conversation);
    }
    this.render(memory);
  }

  private async recall(query: string): Promise<void> {
    clear(this.results, h('p', {}, 'Recalling…'));
    try {
      const { hits } = await api.recall(query, this.scope);
      clear(
        this.results,
        table(
          ['tier', 'score', 'text'],
          hits.map((hit) => [hit.tier, hit.score.toFixed(4), hit.text]),
          'Nothing in memory matches.',
        ),
      );
    } catch (error) {
      clear(this.results, h('p', { class: 'failed' }, `Recall failed: ${(error as Error).message}`));
    }
  }

  private render(memory: MemoryBrowse): void {
    const picker = h(
      'select',
      { 'aria-label': 'Conversation' },
      memory.scopes.map((s) => h('option', { value: s, selected: s === memory.scope }, s)),
    ) as HTMLSelectElement;
    picker.addEventListener('change', () => {
      this.scope = picker.value;
      void this.show();
    });
    const query = h('input', {
      type: 'search',
      name: 'recall',
      placeholder: 'what to recall',
      'aria-label': 'Recall query',
    }) as HTMLInputElement;
    clear(
      this.element,
      h('h2', {}, 'Memory'),
      h(
        'form',
        {
          class: 'recall-form',
          onsubmit: (event: Event) => {
            event.preventDefault();
            if (query.value.trim()) void this.recall(query.value);
          },
        },
        h('label', {}, 'Conversation ', picker),
        query,
        h('button', { type: 'submit', class: 'primary' }, 'Recall'),
      ),
      this.results,
      h(
        'p',
        { class: 'muted' },
        `${memory.counts.entities} entities, ${memory.counts.relations} relations; blocks: ${memory.counts.blocks.map((b) => `${b.tier} ${b.blocks}`).join(', ') || 'none'}`,
      ),
      h('h3', {}, `L1 context (${memory.context.length})`),
      table(
        ['time', 'role', 'text'],
        memory.context.map((e) => [time(e.at), e.role, e.text]),
        'No context in this conversation.',
      ),
      h('h3', {}, `L2 cold docs (${memory.cold.length})`),
      table(
        ['created', 'read', 'text'],
        memory.cold.map((d) => [time(d.createdAt), String(d.accesses), d.text]),
        'Nothing has sunk to cold context.',
      ),
      h('h3', {}, `L3 relations (${memory.relations.length})`),
      table(
        ['subject', 'predicate', 'object', 'confidence'],
        memory.relations.map((r) => [r.subject, r.predicate, r.object, r.confidence.toFixed(2)]),
        'The knowledge graph is empty.',
      ),
      h('h3', {}, `Scenes (${memory.scenes.length})`),
      table(
        ['scene', 'kind', 'strength', 'seen', 'members'],
        memory.scenes.map((s) => [s.key ?? s.sceneId, s.kind, s.strength.toFixed(2), String(s.occurrences), String(s.members)]),
        'No scene yet.',
      ),
    );
  }
}
