/**
 * The recall index's items as columns: one slot per item, each field in an array of its own
 * (times in a Float64Array, tiers and "says when" in bytes), and a map from id to slot. An item
 * as an object cost some 230 bytes besides its text (the object, its boxed time, its one-source
 * array); as a row of columns about 100. Slots of removed items are reused. The table keeps the
 * order items were first set in, as a Map would (a snapshot lists them so).
 */
import type { TimeWindow } from './recallQuery.ts';
import type { RecallItem, RecallTier, WeighedItem } from './recallIndex.ts';

/** An item as the table is given it: a RecallItem with every field there (the times it speaks of worked out once) and its neighbours. */
export type TableRow = Omit<Required<RecallItem>, 'person' | 'sources'> &
  Readonly<{
    person: string | undefined;
    sources: readonly string[] | undefined;
    /** Its neighbours as text, weight, text, weight…: one array, not an object per neighbour. */
    neighbours: readonly (string | number)[];
  }>;

const TIERS: readonly RecallTier[] = ['context', 'cold', 'graph'];
const TIER_CODES = new Map<RecallTier, number>(TIERS.map((tier, code) => [tier, code]));

/** The list every item with no cites, sources or neighbours holds: not an empty array of its own each. */
export const NONE: readonly never[] = Object.freeze([]);

/** One string for one entry (most items cite one thing and stand for one utterance), the shared empty list for none. */
type Compact = string | readonly string[];
const compact = (list: readonly string[]): Compact => (list.length === 0 ? NONE : list.length === 1 ? list[0]! : list);
const expand = (stored: Compact): readonly string[] => (typeof stored === 'string' ? [stored] : stored);

const INITIAL_SLOTS = 64;
const GROWTH = 1.5;

export class ItemTable {
  private readonly slotOf = new Map<string, number>();
  private readonly free: number[] = [];
  private capacity = 0;
  private readonly ids: (string | undefined)[] = [];
  private tiers = new Uint8Array(0);
  private ats = new Float64Array(0);
  private saysWhenFlags = new Uint8Array(0);
  private readonly scopes: (string | undefined)[] = [];
  private readonly texts: (string | undefined)[] = [];
  private readonly citeLists: (Compact | undefined)[] = [];
  private readonly persons: (string | undefined)[] = [];
  /** Undefined where the item says nothing of its sources (a relation's sentence), else as `compact` keeps it. */
  private readonly sourceLists: (Compact | undefined)[] = [];
  private readonly spokenOfs: (readonly TimeWindow[] | undefined)[] = [];
  private readonly neighbourLists: (readonly (string | number)[] | undefined)[] = [];
  private readonly cursor = new ItemView(this);

  get size(): number {
    return this.slotOf.size;
  }

  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  slot(id: string): number | undefined {
    return this.slotOf.get(id);
  }

  /** Live slots, in the order their ids were first set. */
  slots(): IterableIterator<number> {
    return this.slotOf.values();
  }

  /** Sets the item `row.id` (in its place when there is one already); returns its slot. */
  set(row: TableRow): number {
    const tier = TIER_CODES.get(row.tier);
    if (tier === undefined) throw new RangeError(`recall item ${row.id} has no tier of ${TIERS.join(', ')}: ${row.tier}`);
    let slot = this.slotOf.get(row.id);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.grow();
      this.slotOf.set(row.id, slot);
    }
    this.ids[slot] = row.id;
    this.tiers[slot] = tier;
    this.ats[slot] = row.at;
    this.saysWhenFlags[slot] = row.saysWhen ? 1 : 0;
    this.scopes[slot] = row.scope;
    this.texts[slot] = row.text;
    this.citeLists[slot] = compact(row.cites);
    this.persons[slot] = row.person;
    this.sourceLists[slot] = row.sources === undefined ? undefined : compact(row.sources);
    this.spokenOfs[slot] = row.spokenOf;
    this.neighbourLists[slot] = row.neighbours;
    return slot;
  }

  delete(id: string): void {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return;
    this.slotOf.delete(id);
    this.ids[slot] = undefined;
    this.scopes[slot] = undefined;
    this.texts[slot] = undefined;
    this.citeLists[slot] = undefined;
    this.persons[slot] = undefined;
    this.sourceLists[slot] = undefined;
    this.spokenOfs[slot] = undefined;
    this.neighbourLists[slot] = undefined;
    this.free.push(slot);
  }

  private grow(): number {
    const slot = this.ids.length;
    if (slot >= this.capacity) {
      this.capacity = Math.max(INITIAL_SLOTS, Math.ceil(this.capacity * GROWTH));
      this.tiers = grown(this.tiers, new Uint8Array(this.capacity));
      this.ats = grown(this.ats, new Float64Array(this.capacity));
      this.saysWhenFlags = grown(this.saysWhenFlags, new Uint8Array(this.capacity));
    }
    this.ids.push(undefined);
    this.scopes.push(undefined);
    this.texts.push(undefined);
    this.citeLists.push(undefined);
    this.persons.push(undefined);
    this.sourceLists.push(undefined);
    this.spokenOfs.push(undefined);
    this.neighbourLists.push(undefined);
    return slot;
  }

  id(slot: number): string {
    return this.ids[slot]!;
  }

  /** The id `slot` holds now; undefined when it is free (or past the table). */
  idAt(slot: number): string | undefined {
    return this.ids[slot];
  }

  tier(slot: number): RecallTier {
    return TIERS[this.tiers[slot]!]!;
  }

  scope(slot: number): string {
    return this.scopes[slot]!;
  }

  text(slot: number): string {
    return this.texts[slot]!;
  }

  at(slot: number): number {
    return this.ats[slot]!;
  }

  person(slot: number): string | undefined {
    return this.persons[slot];
  }

  saysWhen(slot: number): boolean {
    return this.saysWhenFlags[slot] === 1;
  }

  spokenOf(slot: number): readonly TimeWindow[] {
    return this.spokenOfs[slot]!;
  }

  cites(slot: number): readonly string[] {
    return expand(this.citeLists[slot]!);
  }

  /** Its sources as a list (made for an item of one), undefined when it says nothing of them. */
  sources(slot: number): readonly string[] | undefined {
    const stored = this.sourceLists[slot];
    return stored === undefined ? undefined : expand(stored);
  }

  /** The one utterance the item stands for, when it stands for exactly one. */
  onlySource(slot: number): string | undefined {
    const stored = this.sourceLists[slot];
    return typeof stored === 'string' ? stored : undefined;
  }

  neighbours(slot: number): readonly (string | number)[] {
    return this.neighbourLists[slot]!;
  }

  setNeighbours(slot: number, neighbours: readonly (string | number)[]): void {
    this.neighbourLists[slot] = neighbours;
  }

  /** The item in `slot` as a RecallItem of its own (only the fields it has; not the times it speaks of). */
  item(slot: number): RecallItem {
    const person = this.persons[slot];
    const sources = this.sources(slot);
    return {
      id: this.id(slot),
      tier: this.tier(slot),
      scope: this.scope(slot),
      text: this.text(slot),
      cites: this.cites(slot),
      at: this.at(slot),
      ...(person !== undefined ? { person } : {}),
      ...(sources !== undefined ? { sources } : {}),
    };
  }

  /**
   * The item in `slot` as a weight reads it, through one view the table moves from slot to slot:
   * valid until the next call, so a weight must not keep it (none does: each returns a number).
   */
  view(slot: number): WeighedItem {
    this.cursor.slot = slot;
    return this.cursor;
  }
}

const grown = <T extends Uint8Array | Float64Array>(old: T, into: T): T => {
  into.set(old);
  return into;
};

/** A row of the table read as an item, field by field, without making one. */
class ItemView implements WeighedItem {
  slot = 0;

  constructor(private readonly table: ItemTable) {}

  get id(): string {
    return this.table.id(this.slot);
  }
  get tier(): RecallTier {
    return this.table.tier(this.slot);
  }
  get scope(): string {
    return this.table.scope(this.slot);
  }
  get text(): string {
    return this.table.text(this.slot);
  }
  get at(): number {
    return this.table.at(this.slot);
  }
  get person(): string | undefined {
    return this.table.person(this.slot);
  }
  get sources(): readonly string[] | undefined {
    return this.table.sources(this.slot);
  }
  get spokenOf(): readonly TimeWindow[] {
    return this.table.spokenOf(this.slot);
  }
  get saysWhen(): boolean {
    return this.table.saysWhen(this.slot);
  }
}
