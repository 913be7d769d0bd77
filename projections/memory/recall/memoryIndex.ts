/**
 * The recall index kept in step with the memory: each memory event that adds, moves or drops
 * something recallable updates it; at start it is rebuilt from the read models and the order
 * utterances came in, so it ranks exactly as it did before a restart. It also knows the people
 * the memory has heard (the speakers), whom a query can be about. A cache, never a source of
 * truth.
 */
import type { Recorded } from '../../../events/index.ts';
import { projectionHandles, type ReadModelTx } from '../../projection.ts';
import { coldDocById, coldDocs, type ColdDocRow } from '../coldProjection.ts';
import { contextOf, contextScopes, rowEvent } from '../contextProjection.ts';
import { allRelations, entities, graphNeighbourhood, graphProjection, relationsById, type RelationRow } from '../graphProjection.ts';
import { utteranceText, type ContextEventData } from '../memoryRows.ts';
import type { Tokenizer } from './lexical/tokenize.ts';
import {
  RecallIndex,
  type NeighbourText,
  type RecallIndexOptions,
  type RecallIndexState,
  type RecallItem,
  type WeighedItem,
} from './recallIndex.ts';
import { type NeighbourWeights, UtteranceSequence, type UtteranceSequenceState } from './utteranceSequence.ts';

export type MemoryIndexOptions = RecallIndexOptions &
  Readonly<{
    neighbourWeights?: NeighbourWeights;
    /** Utterances with a longer pause (ms) between them are not each other's neighbours (NEIGHBOUR_PAUSE_MS unless given; Infinity: no limit). */
    neighbourPauseMs?: number;
  }>;

/** The recall id of a context event: `ctx:<eventId>`; of a cold doc `doc:<docId>`; of a relation `rel:<relationId>`. */
const CONTEXT_ID = 'ctx:';
const DOC_ID = 'doc:';
const RELATION_ID = 'rel:';

/** A graph relation as a recall item: its sentence (or the triple), when it happened, whom it is about. */
export const relationItem = (rel: RelationRow): RecallItem => {
  const sources = JSON.parse(rel.source_events) as string[];
  return {
    id: `${RELATION_ID}${rel.relation_id}`,
    tier: 'graph',
    scope: '',
    text: rel.sentence ?? `${rel.subject} ${rel.predicate} ${rel.object}`,
    cites: JSON.parse(rel.cites) as string[],
    at: rel.happened_at,
    person: rel.subject,
    ...(sources.length ? { sources } : {}),
  };
};

/** Relations (or entities) read at once: SQLite bounds the parameters of one statement. */
const PARAMETERS_PER_READ = 500;
const contextItemId = (eventId: string): string => `${CONTEXT_ID}${eventId}`;

/** The one speaker of a run of events, if they all have the same one. */
const personOf = (events: readonly ContextEventData[]): string | undefined => {
  const speaker = events[0]?.speaker;
  return speaker !== undefined && events.every((e) => e.speaker === speaker) ? speaker : undefined;
};

/** A cold doc as a recall item: when its first utterance was said, and by whom if by one person. */
const coldDocItem = (doc: ColdDocRow): RecallItem => {
  const events = JSON.parse(doc.events) as ContextEventData[];
  const person = personOf(events);
  return {
    id: `${DOC_ID}${doc.doc_id}`,
    tier: 'cold',
    scope: doc.scope,
    text: doc.text,
    cites: JSON.parse(doc.cites) as string[],
    at: events[0]?.at ?? doc.created_at,
    ...(person ? { person } : {}),
    ...(events.length ? { sources: events.map((e) => e.eventId) } : {}),
  };
};

/** What a snapshot keeps of a memory index: its recall index, the order utterances came in, and the speakers heard. */
export type MemoryIndexState = Readonly<{
  items: RecallIndexState;
  utterances: UtteranceSequenceState;
  speakers: readonly string[];
}>;

/** What the memory events after a snapshot touched, for `catchUp`. */
type Touched = {
  /** Context items by event id, with their scope (a restored event need not have been an utterance). */
  contexts: Map<string, string>;
  /** Cold doc and relation items, by recall id. */
  items: Set<string>;
  /** Utterances that got a later neighbour. */
  heard: string[];
  /** Utterances that can get no more neighbours. */
  completed: string[];
  /** Entities merged into or renamed to: every relation that touches them now. */
  entities: Set<string>;
};

export class MemoryIndex {
  readonly items: RecallIndex;
  /** The order utterances entered each scope in: where an item's neighbours come from. */
  private readonly utterances: UtteranceSequence;
  private readonly speakers = new Set<string>();
  private readonly nameWords = new Map<string, readonly string[]>();
  /** The graph's entities by the first word of their name, read again after any event the graph's read model folds. */
  private byFirstNameWord: Map<string, { entity: string; words: readonly string[] }[]> | undefined;

  /** `tx` reads the memory read models, which the inline projections have updated before `apply` sees an event. */
  constructor(
    private readonly tx: ReadModelTx,
    private readonly options: MemoryIndexOptions,
    items?: RecallIndex,
  ) {
    this.items = items ?? new RecallIndex(options);
    this.utterances = new UtteranceSequence(options.neighbourWeights, options.neighbourPauseMs);
  }

  /** The index as data, for a snapshot. */
  toState(): MemoryIndexState {
    return { items: this.items.toState(), utterances: this.utterances.toState(), speakers: [...this.speakers] };
  }

  /** The index `toState` described, over the read models `tx` (which must be those it was taken from). */
  static fromState(tx: ReadModelTx, options: MemoryIndexOptions, state: MemoryIndexState): MemoryIndex {
    const index = new MemoryIndex(tx, options, RecallIndex.fromState(options, state.items));
    for (const { scope, eventIds, texts: said, ats } of state.utterances) {
      if (eventIds.length !== said.length || eventIds.length !== ats.length) {
        throw new RangeError(
          `MemoryIndex.fromState: scope ${scope} has ${eventIds.length} utterances, ${said.length} texts and ${ats.length} times`,
        );
      }
      for (const [i, eventId] of eventIds.entries()) index.utterances.append(scope, eventId, said[i]!, ats[i]!);
    }
    for (const speaker of state.speakers) index.speakers.add(speaker);
    return index;
  }

  /** The tokenizer the index ranks with. */
  get tokenize(): Tokenizer {
    return this.options.tokenize;
  }

  /** An entity name's words, tokenized once. */
  private wordsOfName(name: string): readonly string[] {
    let words = this.nameWords.get(name);
    if (!words) {
      words = this.options.tokenize(name);
      this.nameWords.set(name, words);
    }
    return words;
  }

  /**
   * The entities whose every name word is among `words` (what a query names), in id order.
   * Looked up by each word rather than by reading every entity: a recall costs what the query
   * names, not the size of the graph.
   */
  entitiesNamedIn(words: ReadonlySet<string>): string[] {
    if (!this.byFirstNameWord) {
      this.byFirstNameWord = new Map();
      for (const e of entities(this.tx)) {
        const nameWords = this.wordsOfName(e.name);
        if (nameWords.length === 0) continue;
        const list = this.byFirstNameWord.get(nameWords[0]!) ?? [];
        list.push({ entity: e.entity, words: nameWords });
        this.byFirstNameWord.set(nameWords[0]!, list);
      }
    }
    const named: string[] = [];
    for (const word of words) {
      for (const e of this.byFirstNameWord.get(word) ?? []) if (e.words.every((w) => words.has(w))) named.push(e.entity);
    }
    return named.sort();
  }

  /** The speakers heard: the people a recall query can be about. */
  get persons(): ReadonlySet<string> {
    return this.speakers;
  }

  /**
   * Rebuilds the items from the read models; every utterance must have been noted first
   * (`noteUtterance`). Pauses after every `step` items put, where the caller may let other work
   * run, or stop (what is built so far is not an index to use).
   */
  *rebuild(step: number): Generator<void, void, void> {
    const { tx } = this;
    let put = 0;
    for (const scope of contextScopes(tx)) {
      for (const row of contextOf(tx, scope)) {
        this.putContext(scope, rowEvent(row));
        if (++put % step === 0) yield;
      }
    }
    for (const doc of coldDocs(tx)) {
      this.putColdDoc(doc);
      if (++put % step === 0) yield;
    }
    for (const rel of allRelations(tx)) {
      this.putRelation(rel);
      if (++put % step === 0) yield;
    }
    for (const item of this.items.itemsOfOneUtterance()) this.layTrail(item);
  }

  /**
   * An utterance that sank or was distilled (its item says what it said) and may still get
   * neighbours: where it went, as the live index keeps it.
   */
  private layTrail(item: Readonly<{ id: string; tier: string; text: string; sources?: readonly string[] | undefined }>): void {
    if (item.sources?.length !== 1) return;
    const source = item.sources[0]!;
    const itself = item.tier !== 'context' && item.text === this.utterances.textOf(source);
    if (itself && this.utterances.awaitsNeighbours(source)) this.items.leadTo(contextItemId(source), item.id);
  }

  /**
   * Brings an index read back from a snapshot taken earlier in the memory's stream up to now:
   * `events` are the memory events appended since, in order, and the read models are as they are
   * now. Every item those events added, moved, changed, dropped or gave a neighbour is put again
   * as a rebuild would put it now, or dropped when the read models no longer hold it; every other
   * item is already as a rebuild would make it. What a start after a crash pays instead of a
   * rebuild: the events since the snapshot, not the whole history.
   */
  catchUp(events: readonly Recorded[]): void {
    const touched: Touched = { contexts: new Map(), items: new Set(), heard: [], completed: [], entities: new Set() };
    for (const event of events) this.noteTouched(event, touched);
    const { contexts, items } = touched;
    // An utterance that got a later neighbour: its item as the snapshot has it (if that moved since, its new item is touched too).
    for (const eventId of touched.heard) {
      const id = this.items.get(contextItemId(eventId))?.id;
      if (id === undefined || id.startsWith(CONTEXT_ID)) contexts.set(eventId, this.utterances.scopeOf(eventId)!);
      else items.add(id);
    }
    const entities = [...touched.entities];
    for (let at = 0; at < entities.length; at += PARAMETERS_PER_READ) {
      for (const { relation } of graphNeighbourhood(this.tx, entities.slice(at, at + PARAMETERS_PER_READ), 1)) {
        items.add(`${RELATION_ID}${relation.relation_id}`);
      }
    }
    this.putContextsAgain(contexts);
    this.putAgain(items);
    for (const eventId of touched.completed) this.items.settle(contextItemId(eventId));
    this.items.dropTrailsToMissing();
    for (const id of [...items, ...[...contexts.keys()].map(contextItemId)]) {
      const item = this.items.get(id);
      if (item?.id === id) this.layTrail(item);
    }
  }

  /** Notes what one memory event after the snapshot touched (and the utterance it adds, in order). */
  private noteTouched(event: Recorded, touched: Touched): void {
    const { contexts, items } = touched;
    if (projectionHandles(graphProjection, event.type)) this.byFirstNameWord = undefined;
    switch (event.type) {
      case 'ContextEventAppended': {
        const { scope, event: e } = event.data;
        this.noteUtterance(scope, e);
        contexts.set(e.eventId, scope);
        for (const earlier of this.utterances.earlierNeighbours(e.eventId)) touched.heard.push(earlier.eventId);
        const done = this.utterances.completedBy(e.eventId);
        if (done !== undefined) touched.completed.push(done);
        return;
      }
      case 'ContextEventsRestored':
        for (const e of event.data.events) contexts.set(e.eventId, event.data.scope);
        return;
      case 'ContextEventsSunk':
        for (const { events: sunk, docId } of event.data.docs) {
          for (const e of sunk) contexts.set(e.eventId, event.data.scope);
          items.add(`${DOC_ID}${docId}`);
        }
        return;
      case 'ColdDocCommitted':
      case 'ColdDocRemoved':
        items.add(`${DOC_ID}${event.data.docId}`);
        return;
      case 'ColdDocDistilled':
        items.add(`${DOC_ID}${event.data.docId}`);
        for (const t of event.data.triples) items.add(`${RELATION_ID}${t.relationId}`);
        return;
      case 'MemoryCommitted':
        for (const t of event.data.triples) items.add(`${RELATION_ID}${t.relationId}`);
        return;
      case 'RelationEdited':
        items.add(`${RELATION_ID}${event.data.relationId}`);
        return;
      case 'EntitiesMerged':
        touched.entities.add(event.data.into);
        return;
      case 'EntityEdited':
        if (event.data.renameTo) touched.entities.add(event.data.renameTo);
        return;
      case 'MemoryPurged':
      case 'EntityDeleted':
        for (const id of event.data.relationIds) items.add(`${RELATION_ID}${id}`);
        return;
      default:
        return;
    }
  }

  /** The context items of these events (by id, with their scope) as the read models hold them now, or dropped. */
  private putContextsAgain(contexts: ReadonlyMap<string, string>): void {
    const byScope = new Map<string, string[]>();
    for (const [eventId, scope] of contexts) byScope.get(scope)?.push(eventId) ?? byScope.set(scope, [eventId]);
    for (const [scope, eventIds] of byScope) {
      const rows = new Map(contextOf(this.tx, scope).map((row) => [row.event_id, row]));
      for (const eventId of eventIds) {
        const row = rows.get(eventId);
        if (row) this.putContext(scope, rowEvent(row));
        else this.items.remove(contextItemId(eventId));
      }
    }
  }

  /** Each cold doc and relation item of `ids` as the read models hold it now, or dropped when they hold it no more. */
  private putAgain(ids: ReadonlySet<string>): void {
    const relations: string[] = [];
    for (const id of ids) {
      if (id.startsWith(DOC_ID)) {
        const doc = coldDocById(this.tx, id.slice(DOC_ID.length));
        if (doc) this.putColdDoc(doc);
        else this.items.remove(id);
      } else if (id.startsWith(RELATION_ID)) relations.push(id.slice(RELATION_ID.length));
    }
    for (let at = 0; at < relations.length; at += PARAMETERS_PER_READ) {
      const batch = relations.slice(at, at + PARAMETERS_PER_READ);
      const held = relationsById(this.tx, batch);
      for (const rel of held) this.putRelation(rel);
      const kept = new Set(held.map((rel) => rel.relation_id));
      for (const id of batch) if (!kept.has(id)) this.items.remove(`${RELATION_ID}${id}`);
    }
  }

  /** Keeps the index in step with an appended memory event. */
  apply(event: Recorded): void {
    if (projectionHandles(graphProjection, event.type)) this.byFirstNameWord = undefined;
    switch (event.type) {
      case 'ContextEventAppended': {
        const { scope, event: e } = event.data;
        const text = this.noteUtterance(scope, e);
        this.putContext(scope, e);
        for (const earlier of this.utterances.earlierNeighbours(e.eventId))
          this.items.addNeighbour(contextItemId(earlier.eventId), { text, weight: earlier.weight });
        const completed = this.utterances.completedBy(e.eventId);
        if (completed !== undefined) this.items.settle(contextItemId(completed));
        return;
      }
      case 'ContextEventsRestored':
        for (const e of event.data.events) this.putContext(event.data.scope, e);
        return;
      case 'ContextEventsSunk': {
        for (const { events, docId } of event.data.docs) {
          const doc = coldDocById(this.tx, docId)!;
          // One utterance keeps its item (its neighbours' words and its vector) under the doc's id.
          if (events.length === 1) this.moveItem(contextItemId(events[0]!.eventId), this.sharingText(coldDocItem(doc)));
          else {
            for (const e of events) this.items.remove(contextItemId(e.eventId));
            this.putColdDoc(doc);
          }
        }
        return;
      }
      case 'ColdDocCommitted':
        this.putColdDoc(coldDocById(this.tx, event.data.docId)!);
        return;
      case 'ColdDocRemoved':
        this.items.remove(`${DOC_ID}${event.data.docId}`);
        return;
      case 'ColdDocDistilled': {
        // The doc's utterance lives on as a 'said' sentence: moved, so neighbours said later still find it.
        const docId = `${DOC_ID}${event.data.docId}`;
        for (const rel of relationsById(
          this.tx,
          event.data.triples.map((t) => t.relationId),
        )) {
          if (rel.predicate === 'said' && this.items.has(docId)) this.moveItem(docId, this.sharingText(relationItem(rel)));
          else this.putRelation(rel);
        }
        this.items.remove(docId);
        return;
      }
      case 'MemoryCommitted':
        this.putRelations(event.data.triples.map((t) => t.relationId));
        return;
      case 'RelationEdited':
        this.putRelations([event.data.relationId]);
        return;
      case 'EntitiesMerged':
        this.putRelationsOf(event.data.into);
        return;
      case 'EntityEdited':
        if (event.data.renameTo) this.putRelationsOf(event.data.renameTo);
        return;
      case 'MemoryPurged':
      case 'EntityDeleted':
        for (const id of event.data.relationIds) this.items.remove(`${RELATION_ID}${id}`);
        return;
      default:
        return;
    }
  }

  /**
   * How relevant each context event of `scope` is to `query`, best first, by event id (at most
   * `k`): keyword scores, or with `vector` (the query in the dense space) dense and keyword ranks
   * fused. What the prune compares.
   */
  contextRelevance(scope: string, query: string, k: number, vector?: Float32Array): Map<string, number> {
    const inScope = (item: WeighedItem) => (item.tier === 'context' && item.scope === scope ? 1 : 0);
    const hits = vector ? this.items.searchHybrid(query, vector, k, inScope) : this.items.searchContext(query, scope, k);
    return new Map(hits.filter((hit) => hit.id.startsWith(CONTEXT_ID)).map((hit) => [hit.id.slice(CONTEXT_ID.length), hit.score]));
  }

  /** Notes an utterance in its scope's order and its speaker as a person; returns its text as indexed. */
  noteUtterance(scope: string, e: ContextEventData): string {
    const text = utteranceText(e);
    this.utterances.append(scope, e.eventId, text, e.at);
    if (e.speaker) this.speakers.add(e.speaker);
    return text;
  }

  /** An item's neighbours: those of the one utterance it stands for (none for an item of several). */
  private neighboursOf(sources: readonly string[]): NeighbourText[] {
    return sources.length === 1 ? this.utterances.neighboursOf(sources[0]!) : [];
  }

  /** A cold doc as the cold read model holds it, with the neighbours of the utterance it stands for. */
  private putColdDoc(doc: ColdDocRow): void {
    const item = this.sharingText(coldDocItem(doc));
    this.items.put(item, this.neighboursOf(item.sources ?? []));
  }

  private putContext(scope: string, e: ContextEventData): void {
    const item: RecallItem = {
      id: contextItemId(e.eventId),
      tier: 'context',
      scope,
      text: utteranceText(e),
      cites: e.cites ?? [],
      at: e.at,
      ...(e.speaker ? { person: e.speaker } : {}),
      sources: [e.eventId],
    };
    this.items.put(this.sharingText(item), this.utterances.neighboursOf(e.eventId));
  }

  /** Moves an item, keeping where it went only while neighbours may still come for the utterance it stands for. */
  private moveItem(fromId: string, item: RecallItem): void {
    const source = item.sources?.length === 1 ? item.sources[0]! : undefined;
    this.items.move(fromId, item, source === undefined || this.utterances.awaitsNeighbours(source));
  }

  /**
   * The item with the utterance sequence's string for its text when it says what the one
   * utterance it stands for said: the text is then held once, not once per tier and neighbour.
   */
  private sharingText(item: RecallItem): RecallItem {
    const said = item.sources?.length === 1 ? this.utterances.textOf(item.sources[0]!) : undefined;
    return said === item.text ? { ...item, text: said } : item;
  }

  /**
   * A relation as the graph read model holds it now (so the live index and a rebuilt one agree,
   * whichever triple of an id stood and however it was edited or merged since).
   */
  private putRelation(rel: RelationRow): void {
    const item = this.sharingText(relationItem(rel));
    // A whole utterance that lives on as a sentence keeps its neighbours, as it had in the tier before.
    this.items.put(item, rel.predicate === 'said' ? this.neighboursOf(item.sources ?? []) : []);
  }

  private putRelations(relationIds: readonly string[]): void {
    for (const rel of relationsById(this.tx, relationIds)) this.putRelation(rel);
  }

  /** Every relation that touches the entity now (after a merge into it or a rename to it). */
  private putRelationsOf(entity: string): void {
    for (const { relation } of graphNeighbourhood(this.tx, [entity], 1)) this.putRelation(relation);
  }
}
