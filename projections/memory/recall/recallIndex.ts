/**
 * The retrieval index over every tier: L1 context events, L2 cold docs and L3 relation
 * sentences, each an item with its text, the external references it cites and its tier. It is
 * a cache derived from memory events (rebuilt from the read models at start), never a source
 * of truth. Scoring is BM25 over lexical tokens; each context item also carries its
 * neighbours' words at lower weight, since an answer often spans adjacent utterances.
 */
import { type Bm25Counts, Bm25Index, type Bm25State, type BoostedDocuments, NO_TAG } from './bm25Index.ts';
import { ItemTable, NONE, type TableRow } from './itemTable.ts';
import { ItemTimeline } from './itemTimeline.ts';
import type { Tokenizer } from './lexical/tokenize.ts';
import type { TimeWindow } from './recallQuery.ts';
import { spokenOfWindows } from './spokenOfTime.ts';
import { saysWhen } from './recallWeights.ts';
import { cosine } from './vectors.ts';

export type RecallTier = 'context' | 'cold' | 'graph';

export type RecallItem = Readonly<{
  id: string;
  tier: RecallTier;
  scope: string;
  text: string;
  cites: readonly string[];
  /** When what it stands for was said or happened (epoch ms). */
  at: number;
  /** Who said it, or whom the fact is about, when one person: what a question naming them is answered by. */
  person?: string;
  /** The context events the item stands for (what scenes have as members). */
  sources?: readonly string[];
  /** The times its text speaks of, read against `at` (`spokenOfWindows`); the index works them out once, when the item is put. */
  spokenOf?: readonly TimeWindow[];
  /** Whether its text says when (`saysWhen`); the index works it out once, when the item is put. */
  saysWhen?: boolean;
}>;

export type RecallHit = Omit<RecallItem, 'spokenOf' | 'saysWhen'> & Readonly<{ score: number }>;

/** What a weight reads of an item: all but what it cites (which the index keeps compactly). */
export type WeighedItem = Omit<RecallItem, 'cites'>;

/**
 * How much an item counts in one search: its score is multiplied by this; ≤ 0 leaves it out.
 * `max`, when known, bounds what it returns, so a search can stop weighing items that could not
 * rank anyway.
 */
export type RecallWeight = ((item: WeighedItem) => number) &
  Readonly<{
    max?: number;
    /** Every item neither said at nor speaking of a time within `windows` weighs at most `restMax`. */
    windowed?: Readonly<{ windows: readonly TimeWindow[]; restMax: number }>;
  }>;

/** A search scores the items a weight boosts by time apart when they are at most this many, or this share of all. */
const BOOSTED_AT_MOST = 1_024;
const BOOSTED_SHARE = 0.05;
/** The timeline drops the entries of removed items once they outnumber the live items' by this many. */
const TIMELINE_STALE_AT_MOST = 4_096;

/** When an item was said, and the times it speaks of. */
const timesOf = (item: Readonly<{ at: number; spokenOf: readonly TimeWindow[] }>): number[] => [
  item.at,
  ...item.spokenOf.map((w) => w.from),
];

/** Reciprocal rank fusion constant (Cormack et al.). */
const RRF_K = 60;

/**
 * Term weights are repetitions in the BM25 document: an item's own words count this many
 * times, words related to them (a lexicon's synonyms and broader terms) once, and a
 * neighbour's words as many times as the caller says (see `NeighbourText`).
 */
const OWN_WEIGHT = 5;
const RELATED_WEIGHT = 1;

/** Most items speak of no time: they share this one empty list. */
const SPEAKS_OF_NO_TIME: readonly TimeWindow[] = [];
const spokenOfOnce = (item: RecallItem): readonly TimeWindow[] => {
  const windows = spokenOfWindows(item.text, item.at);
  return windows.length > 0 ? windows : SPEAKS_OF_NO_TIME;
};

/** Words of an utterance near an item, and how many times they count for it. */
export type NeighbourText = Readonly<{ text: string; weight: number }>;

/** A lexicon: the words related to a word (its synonyms and broader terms), none when it does not know it. */
export type RelatedWords = (word: string) => readonly string[];

export type RecallIndexOptions = Readonly<{ tokenize: Tokenizer; related?: RelatedWords }>;

/** What a snapshot keeps of a recall index: its items (with their neighbours' texts), where moved items went, and its BM25 index. */
export type RecallIndexState = Readonly<{
  items: readonly (RecallItem & Readonly<{ neighbours: readonly NeighbourText[] }>)[];
  movedTo: readonly (readonly [string, string])[];
  bm25: Bm25State;
}>;

const flatNeighbours = (neighbours: readonly NeighbourText[]): readonly (string | number)[] =>
  neighbours.length === 0 ? NONE : neighbours.flatMap((n) => [n.text, n.weight]);

const neighbourList = (flat: readonly (string | number)[]): NeighbourText[] => {
  const out: NeighbourText[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ text: flat[i] as string, weight: flat[i + 1] as number });
  return out;
};

/** `shared` gives one string for every equal scope and person name, however many items hold it. */
const rowOf = (
  item: RecallItem,
  neighbours: readonly (string | number)[],
  spokenOf: readonly TimeWindow[],
  shared: (text: string) => string,
): TableRow => ({
  id: item.id,
  tier: item.tier,
  scope: shared(item.scope),
  text: item.text,
  cites: item.cites,
  at: item.at,
  person: item.person === undefined ? undefined : shared(item.person),
  sources: item.sources,
  spokenOf,
  // From its text, whatever the item given says.
  saysWhen: saysWhen({ text: item.text }),
  neighbours,
});

export class RecallIndex {
  /** Each item with the texts of its neighbours; its words are worked out again when it is re-indexed. */
  private readonly items = new ItemTable();
  private readonly relatedCache = new Map<string, string[]>();
  private readonly tokenCache = new Map<string, string[]>();
  /** Where an item went when it moved tier, so late neighbours still find it. */
  private readonly movedTo = new Map<string, string>();
  /** Dense vectors of the items, in the one space of the configured provider (none without one). */
  private readonly vectors = new Map<string, Float32Array>();
  /** Items indexed since the last `drainUnembedded`, which need a vector. */
  private readonly unembedded = new Set<string>();
  /** One string per scope and person's name, however many items hold them (each read from the log or a row is a string of its own). */
  private readonly names = new Map<string, string>();
  private readonly shared = (text: string): string => {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    this.names.set(text, text);
    return text;
  };
  /** The context items of each scope (L1): the candidates the prune scores, without scoring the rest. */
  private readonly contextByScope = new Map<string, Set<string>>();
  /** The BM25 counts of each context item: what the prune scores them by, and takes them out of BM25 with. */
  private readonly contextCounts = new Map<string, Bm25Counts>();
  /** The items by when they were said and the times they speak of: a month a query names finds its items here. */
  private readonly timeline = new ItemTimeline();

  constructor(
    private readonly options: RecallIndexOptions,
    private readonly bm25 = new Bm25Index(),
  ) {}

  get size(): number {
    return this.items.size;
  }

  /** The index as data, for a snapshot (vectors are not kept: a start asks the embedding cache again, as a rebuild does). */
  toState(): RecallIndexState {
    return {
      items: [...this.items.slots()].map((slot) => {
        const spokenOf = this.items.spokenOf(slot);
        return {
          ...this.items.item(slot),
          ...(spokenOf.length > 0 ? { spokenOf } : {}),
          neighbours: neighbourList(this.items.neighbours(slot)),
        };
      }),
      movedTo: [...this.movedTo],
      bm25: this.bm25.toState(),
    };
  }

  /**
   * The index `toState` described. Items are copied (a neighbour arriving later changes its
   * item); their texts are taken as given, so a state that shares one string among an
   * utterance and its neighbours' items (as the snapshot's table does) keeps sharing it.
   */
  static fromState(options: RecallIndexOptions, state: RecallIndexState): RecallIndex {
    const index = new RecallIndex(options, Bm25Index.fromState(state.bm25));
    for (const stored of state.items) {
      if (!index.bm25.has(stored.id)) throw new RangeError(`RecallIndex.fromState: item ${stored.id} is not in its BM25 index`);
      const spokenOf = stored.spokenOf?.length ? stored.spokenOf : SPEAKS_OF_NO_TIME;
      const item = rowOf(stored, flatNeighbours(stored.neighbours), spokenOf, index.shared);
      const slot = index.keep(item);
      index.bm25.tag(item.id, slot);
      index.track(item);
      if (item.tier === 'context') {
        const counts = index.documentOf(slot);
        if (!index.bm25.holds(item.id, counts))
          throw new RangeError(`RecallIndex.fromState: item ${item.id} is not in its BM25 index as it reads`);
        index.contextCounts.set(item.id, counts);
      }
      index.unembedded.add(item.id);
    }
    if (index.items.size !== index.bm25.size)
      throw new RangeError('RecallIndex.fromState: its BM25 index holds documents it has no item for');
    for (const [from, to] of state.movedTo) index.movedTo.set(from, to);
    return index;
  }

  has(id: string): boolean {
    return this.items.has(id);
  }

  /** Adds (or replaces) an item; `neighbourTexts` widen what it matches. */
  put(item: RecallItem, neighbourTexts: readonly NeighbourText[] = []): void {
    this.movedTo.delete(item.id);
    this.untrack(item.id);
    this.unindex(item.id);
    this.keep(rowOf(item, flatNeighbours(neighbourTexts), spokenOfOnce(item), this.shared));
    this.track(item);
    this.unembedded.add(item.id);
    this.index(item.id);
  }

  private keep(item: TableRow): number {
    const slot = this.items.set(item);
    this.timeline.add(item.id, slot, timesOf(item));
    return slot;
  }

  private track(item: Readonly<{ id: string; tier: RecallTier; scope: string }>): void {
    if (item.tier !== 'context' || item.scope === undefined) return;
    const ids = this.contextByScope.get(item.scope) ?? new Set<string>();
    ids.add(item.id);
    this.contextByScope.set(item.scope, ids);
  }

  private untrack(id: string): void {
    const slot = this.items.slot(id);
    if (slot === undefined || this.items.tier(slot) !== 'context') return;
    const scope = this.items.scope(slot);
    const ids = this.contextByScope.get(scope);
    ids?.delete(id);
    if (ids?.size === 0) this.contextByScope.delete(scope);
  }

  /** Adds words of a neighbour that arrived later. */
  addNeighbour(id: string, neighbour: NeighbourText): void {
    const resolved = this.resolve(id);
    const slot = this.items.slot(resolved);
    if (slot === undefined) return;
    this.unindex(resolved);
    // concat makes an array of just the length needed; spreading into a literal leaves room to grow in every item.
    this.items.setNeighbours(slot, this.items.neighbours(slot).concat(neighbour.text, neighbour.weight));
    this.index(resolved);
  }

  /**
   * The item that stood under `id` gets no more neighbours: where it moved need not be kept (a
   * memory of a year's talk would otherwise keep a step for every utterance that ever sank).
   */
  settle(id: string): void {
    for (let current: string | undefined = id, hops = 0; current !== undefined && hops < 8; hops++) {
      const next: string | undefined = this.movedTo.get(current);
      this.movedTo.delete(current);
      current = next;
    }
  }

  /**
   * The same content under a new id and tier (it sank, or was distilled): its neighbours' words go
   * with it. `awaitsNeighbours`: whether neighbours may still come for it under its old id, so
   * where it went must be kept until it is settled.
   */
  move(fromId: string, item: RecallItem, awaitsNeighbours = true): void {
    const oldSlot = this.items.slot(fromId);
    const old = oldSlot === undefined ? undefined : { text: this.items.text(oldSlot), neighbours: this.items.neighbours(oldSlot) };
    const vector = this.vectors.get(fromId);
    this.remove(fromId);
    if (vector && item.text === old?.text) this.vectors.set(item.id, vector);
    else this.unembedded.add(item.id);
    if (awaitsNeighbours) this.leaveTrail(fromId, item.id);
    this.untrack(item.id);
    this.unindex(item.id);
    this.keep(rowOf(item, old?.neighbours ?? NONE, spokenOfOnce(item), this.shared));
    this.track(item);
    this.index(item.id);
  }

  /**
   * Where an item that moved went: a trail that led to it now leads on (one step per utterance,
   * however often it moves: neighbours are addressed by the utterance's first id), else a new one.
   */
  private leaveTrail(fromId: string, toId: string): void {
    let redirected = false;
    for (const [from, to] of this.movedTo) {
      if (to !== fromId) continue;
      this.movedTo.set(from, toId);
      redirected = true;
    }
    if (!redirected) this.movedTo.set(fromId, toId);
  }

  /** Neighbours addressed to `fromId` (an item gone since) reach `id`: the trail `move` leaves, laid by a rebuild. */
  leadTo(fromId: string, id: string): void {
    if (!this.items.has(fromId) && this.items.has(id)) this.movedTo.set(fromId, id);
  }

  /** Forgets where items went that are no longer held (a trail a rebuild would not lay). */
  dropTrailsToMissing(): void {
    for (const [from, to] of this.movedTo) if (!this.items.has(to)) this.movedTo.delete(from);
  }

  /** The items that stand for one utterance, with it. */
  *itemsOfOneUtterance(): Iterable<Readonly<{ id: string; tier: RecallTier; text: string; sources: readonly [string] }>> {
    for (const slot of this.items.slots()) {
      const source = this.items.onlySource(slot);
      if (source !== undefined)
        yield { id: this.items.id(slot), tier: this.items.tier(slot), text: this.items.text(slot), sources: [source] };
    }
  }

  setVector(id: string, vector: Float32Array): void {
    if (this.items.has(id)) this.vectors.set(id, vector);
  }

  /** The items that have no vector yet (and forgets them). */
  drainUnembedded(): { id: string; text: string }[] {
    const out = [...this.unembedded].flatMap((id) => {
      const slot = this.items.slot(id);
      return slot !== undefined && !this.vectors.has(id) ? [{ id, text: this.items.text(slot) }] : [];
    });
    this.unembedded.clear();
    return out;
  }

  remove(id: string): void {
    this.untrack(id);
    this.unindex(id);
    this.unembedded.delete(id);
    this.vectors.delete(id);
    this.items.delete(id);
    if (this.timeline.entries > 2 * this.items.size + TIMELINE_STALE_AT_MOST) {
      this.timeline.rebuild(
        [...this.items.slots()].map(
          (slot) => [this.items.id(slot), slot, timesOf({ at: this.items.at(slot), spokenOf: this.items.spokenOf(slot) })] as const,
        ),
      );
    }
  }

  get(id: string): RecallItem | undefined {
    const slot = this.items.slot(this.resolve(id));
    return slot === undefined ? undefined : this.items.item(slot);
  }

  private resolve(id: string): string {
    let current = id;
    for (let hops = 0; !this.items.has(current) && this.movedTo.has(current) && hops < 8; hops++) current = this.movedTo.get(current)!;
    return current;
  }

  search(query: string, k: number, weigh?: RecallWeight): RecallHit[] {
    const terms = this.options.tokenize(query);
    if (terms.length === 0) return [];
    const hits = this.bm25.search(
      terms,
      k,
      // Each document is tagged with its item's slot: weighing it looks up no id.
      weigh && ((id, slot) => weigh(this.items.view(slot === NO_TAG ? this.items.slot(id)! : slot))),
      weigh?.max,
      this.boostedFor(weigh),
    );
    return hits.map((hit) => this.hit(hit.id, hit.score));
  }

  /** The items of the days or months a weight boosts, when they are few: a search scores them whatever words they hold. */
  private boostedFor(weigh: RecallWeight | undefined): BoostedDocuments | undefined {
    if (!weigh?.windowed) return undefined;
    const atMost = Math.max(BOOSTED_AT_MOST, this.items.size * BOOSTED_SHARE);
    // An entry is its item's while the slot still holds that id (a removed item's slot is reused).
    const slots = this.timeline.within(weigh.windowed.windows, (id, slot) => this.items.idAt(slot) === id, atMost);
    return slots && { tags: slots, restMax: weigh.windowed.restMax };
  }

  /**
   * The context items of `scope` that match the query, ranked exactly as `search` weighed 1 for
   * them and 0 for the rest would, but scoring only them: what the prune compares costs what the
   * scope's context holds, not what the whole memory does.
   */
  searchContext(query: string, scope: string, k: number): RecallHit[] {
    const terms = this.options.tokenize(query);
    const ids = this.contextByScope.get(scope);
    if (terms.length === 0 || ids === undefined) return [];
    const docs = [...ids].map((id) => ({ id, counts: this.contextCounts.get(id)! }));
    return this.bm25.searchAmong(terms, docs, k).map((hit) => this.hit(hit.id, hit.score));
  }

  /**
   * Dense + keyword: BM25 and cosine similarity each rank the items (each score scaled by
   * `weigh`), and the two rankings are fused by reciprocal rank (k = 60), so neither score
   * scale dominates. Items without a vector take part through their keyword rank only.
   */
  searchHybrid(query: string, queryVector: Float32Array, k: number, weigh?: RecallWeight): RecallHit[] {
    const pool = Math.max(k * 4, 50);
    const keyword = this.search(query, pool, weigh);
    const dense: { id: string; score: number }[] = [];
    for (const [id, v] of this.vectors) {
      const weight = weigh ? weigh(this.items.view(this.items.slot(id)!)) : 1;
      // Similarity moved to [0, 1] first, so a weight above 1 always ranks an item higher.
      if (weight > 0) dense.push({ id, score: ((1 + cosine(queryVector, v)) / 2) * weight });
    }
    dense.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    const fused = new Map<string, number>();
    for (const ranking of [keyword, dense.slice(0, pool)]) {
      for (const [rank, h] of ranking.entries()) fused.set(h.id, (fused.get(h.id) ?? 0) + 1 / (RRF_K + rank + 1));
    }
    return [...fused]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, k)
      .map(([id, score]) => this.hit(id, score));
  }

  private hit(id: string, score: number): RecallHit {
    return { ...this.items.item(this.items.slot(id)!), score };
  }

  /** The lexicon's words for the item's own words (each once), as tokens; not for the name of its person. */
  private relatedTokens(text: string, person: string | undefined): string[] {
    const lookup = this.options.related;
    if (!lookup) return [];
    const lowerPerson = person?.toLowerCase();
    const out = new Set<string>();
    for (const word of new Set(text.match(/[A-Za-z][A-Za-z'-]*[A-Za-z]/g) ?? [])) {
      if (word.toLowerCase() === lowerPerson) continue;
      let tokens = this.relatedCache.get(word);
      if (!tokens) {
        tokens = [...new Set(lookup(word).flatMap((w) => this.options.tokenize(w)))];
        this.relatedCache.set(word, tokens);
      }
      for (const t of tokens) out.add(t);
    }
    for (const t of this.tokens(text)) out.delete(t);
    return [...out];
  }

  private tokens(text: string): string[] {
    let tokens = this.tokenCache.get(text);
    if (!tokens) {
      tokens = this.options.tokenize(text);
      if (this.tokenCache.size > 50_000) this.tokenCache.clear();
      this.tokenCache.set(text, tokens);
    }
    return tokens;
  }

  /** Puts the stored item `id` into BM25 (and, in context, keeps its counts). */
  private index(id: string): void {
    const slot = this.items.slot(id)!;
    const counts = this.documentOf(slot);
    this.bm25.addCounts(id, counts, slot);
    if (this.items.tier(slot) === 'context') this.contextCounts.set(id, counts);
  }

  /** Takes the stored item `id`, as it is now, out of BM25 (nothing when there is none). */
  private unindex(id: string): void {
    const slot = this.items.slot(id);
    if (slot === undefined) return;
    this.bm25.remove(id, this.contextCounts.get(id) ?? this.documentOf(slot));
    this.contextCounts.delete(id);
  }

  /**
   * The item's BM25 document: its own words OWN_WEIGHT times each, related words once, each
   * neighbour's words its weight's times. Worked out again to take it out (the same item gives
   * the same counts), so BM25 keeps no copy of every item's counts.
   */
  private documentOf(slot: number): Map<string, number> {
    const counts = new Map<string, number>();
    const count = (tokens: readonly string[], times: number): void => {
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + times);
    };
    const text = this.items.text(slot);
    count(this.tokens(text), OWN_WEIGHT);
    count(this.relatedTokens(text, this.items.person(slot)), RELATED_WEIGHT);
    const neighbours = this.items.neighbours(slot);
    for (let i = 0; i < neighbours.length; i += 2) count(this.tokens(neighbours[i] as string), neighbours[i + 1] as number);
    for (const [t, times] of counts) if (times <= 0) counts.delete(t);
    return counts;
  }
}
