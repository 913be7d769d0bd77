/**
 * Finds where any of many strings (a secret's written forms, sensitive words) are in a text.
 * With a few, each is looked for in turn (`indexOf`, which skips ahead on long patterns); with
 * many, one pass over the text per length tier hashes a window of every string at once, so
 * thousands of strings cost about what a few dozen do. Both find every place each string starts,
 * overlapping ones too.
 */

/** Strings to find, each with a name, in the order that ranks them (the earlier wins a tie). */
export type Needles = readonly (readonly [name: string, text: string])[];

/** Where a string was found; `rank`, its place in the needles looked for. */
export type Found = Readonly<{ start: number; end: number; name: string; rank: number }>;

/** Up to this many needles, each is looked for in turn; past it, in one pass per tier. */
export const LOOKED_FOR_IN_TURN = 16;
/** Each tier's window, longest first: a needle is hashed by the widest window it fills. Shorter ones are looked for in turn. */
const WINDOWS = [12, 4, 2] as const;
const BASE = 0x01000193;
const FILTER_BITS = 1 << 18;

/** A needle found by the window at `offset` into it. */
type Entry = Readonly<{ name: string; text: string; rank: number; offset: number }>;

/**
 * The needles of one window size: by the hash of their window, and a bit filter of those hashes;
 * `skips`, when their windows are few, how far a window ending in each pair of characters can move on.
 */
type Tier = {
  readonly window: number;
  readonly outgoing: number;
  readonly byHash: Map<number, Entry[]>;
  readonly filter: Uint32Array;
  skips?: Uint8Array;
};

/** A pair of characters as an index into a tier's skips (pairs that share one only make the skips shorter). */
const PAIR_BITS = 16;
const pairAt = (text: string, end: number): number => ((text.charCodeAt(end - 1) << 7) ^ text.charCodeAt(end)) & ((1 << PAIR_BITS) - 1);
/** Skips are kept while the windows' pairs fill at most this share of the table: past it, most skips would be short. */
const MOST_PAIRS = (1 << PAIR_BITS) / 16;

/**
 * For each pair of characters, how far a window ending in it can move on before a needle's window
 * could end there (Wu and Manber's shift table): the distance from the pair to the window's end,
 * least over every window holding it; a pair in none moves it its length less one.
 */
const skipsOf = (tier: Tier): Uint8Array | undefined => {
  const { window } = tier;
  const windows = [...tier.byHash.values()].flat();
  if (window < 4 || windows.length * (window - 1) > MOST_PAIRS) return undefined;
  const skips = new Uint8Array(1 << PAIR_BITS).fill(window - 1);
  for (const { text, offset } of windows) {
    for (let end = offset + 1; end < offset + window; end++) {
      const pair = pairAt(text, end);
      const skip = offset + window - 1 - end;
      if (skip < skips[pair]!) skips[pair] = skip;
    }
  }
  return skips;
};

const windowHash = (text: string, at: number, window: number): number => {
  let hash = 0;
  for (let i = at; i < at + window; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
};

const tierOf = (window: number): Tier => {
  let outgoing = 1;
  for (let i = 0; i < window; i++) outgoing = Math.imul(outgoing, BASE);
  return { window, outgoing, byHash: new Map(), filter: new Uint32Array(FILTER_BITS / 32) };
};

export class StringFinder {
  private readonly inTurn: Entry[] = [];
  private readonly tiers: Tier[] = [];
  /** Every needle's text once, in code-unit order, for `openFrom`; sorted at its first call. */
  private sorted: string[] | undefined;
  /** The length of the longest needle. */
  readonly longest: number;
  private readonly firstUnits = new Set<number>();

  constructor(private readonly needles: Needles) {
    this.longest = needles.reduce((longest, [, text]) => Math.max(longest, text.length), 0);
    for (const [, text] of needles) if (text.length > 0) this.firstUnits.add(text.charCodeAt(0));
    const tiers = new Map<number, Tier>();
    const placed: { tier: Tier; name: string; text: string; rank: number; windows: readonly Window[] }[] = [];
    /** How many needles of each tier have a window of each hash. */
    const sharing = new Map<Tier, Map<number, number>>();
    needles.forEach(([name, text], rank) => {
      const window = needles.length > LOOKED_FOR_IN_TURN ? WINDOWS.find((w) => text.length >= w) : undefined;
      if (window === undefined) {
        this.inTurn.push({ name, text, rank, offset: 0 });
        return;
      }
      let tier = tiers.get(window);
      if (!tier) {
        tier = tierOf(window);
        tiers.set(window, tier);
        this.tiers.push(tier);
        sharing.set(tier, new Map());
      }
      const windows = windowsOf(text, window);
      const counts = sharing.get(tier)!;
      for (const hash of new Set(windows.map((w) => w.hash))) counts.set(hash, (counts.get(hash) ?? 0) + 1);
      placed.push({ tier, name, text, rank, windows });
    });
    for (const { tier, name, text, rank, windows } of placed) {
      const { offset, hash } = leastShared(windows, sharing.get(tier)!, text.length - tier.window);
      const entry = { name, text, rank, offset };
      const bucket = tier.byHash.get(hash);
      if (bucket) bucket.push(entry);
      else tier.byHash.set(hash, [entry]);
      const bit = hash & (FILTER_BITS - 1);
      tier.filter[bit >>> 5]! |= 1 << (bit & 31);
    }
    for (const tier of this.tiers) tier.skips = skipsOf(tier);
  }

  /**
   * The first place in `text` where a needle could begin but has not ended yet (what follows it
   * to the end of `text` is the start of a needle, shorter than it), or `text.length` if there is
   * none: the end a text arriving in pieces must hold back until the next piece.
   */
  openFrom(text: string): number {
    this.sorted ??= [...new Set(this.needles.map(([, needle]) => needle))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sorted = this.sorted;
    for (let at = Math.max(0, text.length - this.longest + 1); at < text.length; at++) {
      if (!this.firstUnits.has(text.charCodeAt(at))) continue;
      const tail = text.slice(at);
      // The first needle not before the tail in order is the one the tail would begin, if any does.
      let low = 0;
      let high = sorted.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (sorted[middle]! < tail) low = middle + 1;
        else high = middle;
      }
      const next = sorted[low] === tail ? sorted[low + 1] : sorted[low];
      if (next?.startsWith(tail)) return at;
    }
    return text.length;
  }

  /** Adds to `found` every place a needle is in `text`, each ranked `rankFrom` on. */
  find(text: string, found: Found[], rankFrom = 0): Found[] {
    for (const { name, text: needle, rank } of this.inTurn) {
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
        found.push({ start: at, end: at + needle.length, name, rank: rankFrom + rank });
      }
    }
    for (const tier of this.tiers) (tier.skips ? findBySkipping : findByWindow)(tier, text, found, rankFrom);
    return found;
  }
}

/** Offsets tried for a needle's window, at most: spread over it when it is longer. */
const OFFSETS_TRIED = 64;

/** A window of a needle: where it starts, its hash, and how many different characters it holds. */
type Window = Readonly<{ offset: number; hash: number; distinct: number }>;

const windowsOf = (text: string, window: number): Window[] => {
  const last = text.length - window;
  const step = Math.max(1, Math.ceil((last + 1) / OFFSETS_TRIED));
  const windows: Window[] = [];
  for (let offset = 0; offset <= last; offset += step) {
    windows.push({ offset, hash: windowHash(text, offset, window), distinct: new Set(text.slice(offset, offset + window)).size });
  }
  return windows;
};

/**
 * Where to hash a needle: the window fewest needles of the tier also have, then the one with the
 * most different characters, then the one nearest the middle. Strings of one kind share how they
 * begin, end or repeat (`sk-proj-`, `-----BEGIN`, a URL's path); hashed where they differ, a text
 * made of what they share does not check each of them at every place.
 */
const leastShared = (windows: readonly Window[], sharing: ReadonlyMap<number, number>, last: number): Window => {
  const middle = last >> 1;
  let best = windows[0]!;
  for (const w of windows) {
    const byShare = sharing.get(w.hash)! - sharing.get(best.hash)!;
    const better =
      byShare < 0 ||
      (byShare === 0 &&
        (w.distinct > best.distinct || (w.distinct === best.distinct && Math.abs(w.offset - middle) < Math.abs(best.offset - middle))));
    if (better) best = w;
  }
  return best;
};

/** One pass of a rolling hash over `text`: each window whose hash a needle's has is checked against it. */
const findByWindow = ({ window, outgoing, byHash, filter }: Tier, text: string, found: Found[], rankFrom: number): void => {
  if (text.length < window) return;
  let hash = windowHash(text, 0, window);
  for (let at = 0; ; at++) {
    const bit = hash & (FILTER_BITS - 1);
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) !== 0) {
      for (const { name, text: needle, rank, offset } of byHash.get(hash) ?? []) {
        const start = at - offset;
        if (start >= 0 && text.startsWith(needle, start)) found.push({ start, end: start + needle.length, name, rank: rankFrom + rank });
      }
    }
    if (at + window >= text.length) return;
    hash = (Math.imul(hash, BASE) - Math.imul(text.charCodeAt(at), outgoing) + text.charCodeAt(at + window)) | 0;
  }
};

/** The needle windows' places looked at where the skips let a window move on past those that cannot be one. */
const findBySkipping = (tier: Tier, text: string, found: Found[], rankFrom: number): void => {
  const { window, byHash, filter } = tier;
  const skips = tier.skips!;
  for (let end = window - 1; end < text.length; ) {
    const skip = skips[pairAt(text, end)]!;
    if (skip > 0) {
      end += skip;
      continue;
    }
    const at = end - window + 1;
    const hash = windowHash(text, at, window);
    const bit = hash & (FILTER_BITS - 1);
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) !== 0) {
      for (const { name, text: needle, rank, offset } of byHash.get(hash) ?? []) {
        const start = at - offset;
        if (start >= 0 && text.startsWith(needle, start)) found.push({ start, end: start + needle.length, name, rank: rankFrom + rank });
      }
    }
    end++;
  }
};

const finders = new WeakMap<Needles, StringFinder>();

/** The finder of `needles`, made once per list. */
export const finderOf = (needles: Needles): StringFinder => {
  let finder = finders.get(needles);
  if (!finder) {
    finder = new StringFinder(needles);
    finders.set(needles, finder);
  }
  return finder;
};
