/**
 * What a Lua pattern match costs, counted before the real one runs. Lua's matcher backtracks:
 * `string.find(("a"):rep(30), ("a*"):rep(30) .. "b")` takes longer than the universe, inside one
 * library call where no instruction hook fires. This walks the same algorithm as Lua's lstrlib
 * (same order of attempts, same results: test/adapters/patternSteps.property.test.ts checks it
 * against fengari) and counts its steps, giving up as soon as they pass a ceiling. Pure: bytes in,
 * a count out.
 */

const ESC = 37; // %
const MAX_DEPTH = 200; // lstrlib's MAXCCALLS: deeper, the real match fails with "pattern too complex"
const MAX_CAPTURES = 32;
const POSITION = -2;
const UNFINISHED = -1;

/** Thrown inside the walk: the ceiling was passed, or the real match would stop with an error here. */
class WalkEnded extends Error {}

const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** An ASCII digit byte (absent: no). */
export const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 48 && c <= 57;
const isGraph = (c: number) => c >= 33 && c <= 126;
const classMatches = (c: number, cl: number): boolean => {
  const lower = cl | 32;
  let yes: boolean;
  switch (lower) {
    case 97:
      yes = isAlpha(c);
      break; // a
    case 99:
      yes = c < 32 || c === 127;
      break; // c
    case 100:
      yes = isDigit(c);
      break; // d
    case 103:
      yes = isGraph(c);
      break; // g
    case 108:
      yes = c >= 97 && c <= 122;
      break; // l
    case 112:
      yes = isGraph(c) && !isAlpha(c) && !isDigit(c);
      break; // p
    case 115:
      yes = c === 32 || (c >= 9 && c <= 13);
      break; // s
    case 117:
      yes = c >= 65 && c <= 90;
      break; // u
    case 119:
      yes = isAlpha(c) || isDigit(c);
      break; // w
    case 120:
      yes = isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
      break; // x
    case 122:
      yes = c === 0;
      break; // z (deprecated)
    default:
      return cl === c;
  }
  return cl === lower ? yes : !yes;
};

class Walk {
  steps = 0;
  private depth = MAX_DEPTH;
  private level = 0;
  private readonly start: number[] = [];
  private readonly length: number[] = [];

  constructor(
    private readonly src: Uint8Array,
    private readonly pat: Uint8Array,
    private readonly ceiling: number,
  ) {}

  tick(n = 1): void {
    this.steps += n;
    if (this.steps > this.ceiling) throw new WalkEnded();
  }

  get exhausted(): boolean {
    return this.steps > this.ceiling;
  }

  reset(): void {
    this.level = 0;
  }

  /** Whether a capture of the match just found is still open (handing it out then raises "unfinished capture"). */
  get unfinished(): boolean {
    return this.length.slice(0, this.level).includes(UNFINISHED);
  }

  private classEnd(p: number): number {
    const c = this.pat[p++];
    if (c === ESC) {
      if (p >= this.pat.length) throw new WalkEnded();
      return p + 1;
    }
    if (c === 91) {
      if (this.pat[p] === 94) p++;
      do {
        if (p >= this.pat.length) throw new WalkEnded();
        if (this.pat[p++] === ESC && p < this.pat.length) p++;
      } while (this.pat[p] !== 93);
      return p + 1;
    }
    return p;
  }

  /** `[set]` from `p` (its '[') to `end` (its ']'). */
  private inSet(c: number, p: number, end: number): boolean {
    let matches = true;
    if (this.pat[p + 1] === 94) {
      matches = false;
      p++;
    }
    while (++p < end) {
      this.tick();
      if (this.pat[p] === ESC) {
        p++;
        if (classMatches(c, this.pat[p]!)) return matches;
      } else if (this.pat[p + 1] === 45 && p + 2 < end) {
        p += 2;
        if (this.pat[p - 2]! <= c && c <= this.pat[p]!) return matches;
      } else if (this.pat[p] === c) return matches;
    }
    return !matches;
  }

  private single(s: number, p: number, ep: number): boolean {
    this.tick();
    if (s >= this.src.length) return false;
    const c = this.src[s]!;
    switch (this.pat[p]) {
      case 46:
        return true;
      case ESC:
        return classMatches(c, this.pat[p + 1]!);
      case 91:
        return this.inSet(c, p, ep - 1);
      default:
        return this.pat[p] === c;
    }
  }

  private balance(s: number, p: number): number | null {
    if (p + 1 >= this.pat.length) throw new WalkEnded();
    if (this.src[s] !== this.pat[p]) return null;
    const open = this.pat[p];
    const close = this.pat[p + 1];
    let depth = 1;
    while (++s < this.src.length) {
      this.tick();
      if (this.src[s] === close) {
        if (--depth === 0) return s + 1;
      } else if (this.src[s] === open) depth++;
    }
    return null;
  }

  private capture(s: number, p: number, what: number): number | null {
    if (this.level >= MAX_CAPTURES) throw new WalkEnded();
    this.start[this.level] = s;
    this.length[this.level] = what;
    this.level++;
    const end = this.match(s, p);
    if (end === null) this.level--;
    return end;
  }

  private closeCapture(s: number, p: number): number | null {
    let l = this.level - 1;
    while (l >= 0 && this.length[l] !== UNFINISHED) l--;
    if (l < 0) throw new WalkEnded();
    this.length[l] = s - this.start[l]!;
    const end = this.match(s, p);
    if (end === null) this.length[l] = UNFINISHED;
    return end;
  }

  private backReference(s: number, digit: number): number | null {
    const l = digit - 49;
    if (l < 0 || l >= this.level || this.length[l] === UNFINISHED) throw new WalkEnded();
    const length = this.length[l]!;
    const from = this.start[l]!;
    this.tick(Math.max(1, length));
    // As lstrlib: a position capture has length -2, which compares as empty and moves back by two.
    if (this.src.length - s < length) return null;
    for (let i = 0; i < length; i++) if (this.src[from + i] !== this.src[s + i]) return null;
    return s + length;
  }

  /** Where a match of the pattern from `p` on, at subject position `s`, ends; null for none. */
  match(s: number | null, p: number): number | null {
    this.tick();
    if (this.depth-- === 0) throw new WalkEnded();
    const end = this.pat.length;
    for (;;) {
      if (s === null || p === end) break;
      const c = this.pat[p];
      if (c === 40) {
        s = this.pat[p + 1] === 41 ? this.capture(s, p + 2, POSITION) : this.capture(s, p + 1, UNFINISHED);
        break;
      }
      if (c === 41) {
        s = this.closeCapture(s, p + 1);
        break;
      }
      if (c === 36 && p + 1 === end) {
        s = s === this.src.length ? s : null;
        break;
      }
      if (c === ESC && this.pat[p + 1] === 98) {
        s = this.balance(s, p + 2);
        p += 4;
        continue;
      }
      if (c === ESC && this.pat[p + 1] === 102) {
        p += 2;
        if (this.pat[p] !== 91) throw new WalkEnded();
        const ep = this.classEnd(p);
        const previous = s === 0 ? 0 : this.src[s - 1]!;
        const next = s === this.src.length ? 0 : this.src[s]!;
        if (!this.inSet(previous, p, ep - 1) && this.inSet(next, p, ep - 1)) {
          p = ep;
          continue;
        }
        s = null;
        break;
      }
      if (c === ESC && isDigit(this.pat[p + 1])) {
        s = this.backReference(s, this.pat[p + 1]!);
        p += 2;
        continue;
      }
      const ep = this.classEnd(p);
      const suffix = this.pat[ep];
      if (!this.single(s, p, ep)) {
        if (suffix === 42 || suffix === 63 || suffix === 45) {
          p = ep + 1;
          continue;
        }
        s = null;
        break;
      }
      if (suffix === 63) {
        const res = this.match(s + 1, ep + 1);
        if (res !== null) {
          s = res;
          break;
        }
        p = ep + 1;
        continue;
      }
      if (suffix === 43 || suffix === 42) {
        s = this.greedy(suffix === 43 ? s + 1 : s, p, ep);
        break;
      }
      if (suffix === 45) {
        s = this.lazy(s, p, ep);
        break;
      }
      s++;
      p = ep;
    }
    this.depth++;
    return s;
  }

  private greedy(s: number, p: number, ep: number): number | null {
    let i = 0;
    while (this.single(s + i, p, ep)) i++;
    for (; i >= 0; i--) {
      const res = this.match(s + i, ep + 1);
      // As fengari's max_expand, which tests the end for truth: a match ending at 0 counts as none.
      if (res !== null && res !== 0) return res;
    }
    return null;
  }

  private lazy(s: number, p: number, ep: number): number | null {
    for (;;) {
      const res = this.match(s, ep + 1);
      if (res !== null) return res;
      if (!this.single(s, p, ep)) return null;
      s++;
    }
  }
}

/**
 * What a walk found: the steps taken, and how it ended: a match (its 0-based start and end), none,
 * the error the real match raises (a malformed pattern, "pattern too complex"), or the ceiling
 * passed. `count` is gsub's number of matches.
 */
export type PatternWalk = Readonly<{
  steps: number;
  outcome: 'found' | 'none' | 'error' | 'ceiling';
  start: number | null;
  end: number | null;
  count: number;
}>;

type Found = { start: number | null; end: number | null; count?: number };

const ended = (walk: Walk, error: unknown): PatternWalk => {
  if (!(error instanceof WalkEnded)) throw error;
  return { steps: walk.steps, outcome: walk.exhausted ? 'ceiling' : 'error', start: null, end: null, count: 0 };
};

const walkWith = (src: Uint8Array, pattern: Uint8Array, ceiling: number, run: (walk: Walk) => Found): PatternWalk => {
  const walk = new Walk(src, pattern[0] === 94 ? pattern.subarray(1) : pattern, ceiling);
  try {
    const { start, end, count = 0 } = run(walk);
    return { steps: walk.steps, outcome: start === null && count === 0 ? 'none' : 'found', start, end, count };
  } catch (error) {
    return ended(walk, error);
  }
};

const SPECIALS = new Set([...'^$*+?.([%-'].map((c) => c.charCodeAt(0)));

/** Whether string.find searches for the pattern as plain text (asked to, or nothing special in it): linear, no walk needed. */
export const isPlainFind = (pattern: Uint8Array, plain: boolean): boolean => plain || !pattern.some((c) => SPECIALS.has(c));

/**
 * The steps of `string.find`/`string.match(src, pattern, init)` (init 1-based, as Lua takes it),
 * counted up to `ceiling`.
 */
export const findSteps = (src: Uint8Array, pattern: Uint8Array, init: number, ceiling: number): PatternWalk => {
  const anchored = pattern[0] === 94;
  return walkWith(src, pattern, ceiling, (walk) => {
    let s = init - 1;
    do {
      walk.reset();
      const end = walk.match(s, 0);
      if (end !== null && walk.unfinished) throw new WalkEnded();
      if (end !== null) return { start: s, end };
    } while (s++ < src.length && !anchored);
    return { start: null, end: null };
  });
};

/**
 * The steps of `string.gsub(src, pattern, _, max)`: every match attempt it makes, in its order.
 */
export const gsubSteps = (src: Uint8Array, pattern: Uint8Array, max: number, ceiling: number): PatternWalk => {
  const anchored = pattern[0] === 94;
  return walkWith(src, pattern, ceiling, (walk) => {
    let s = 0;
    let last: number | null = null;
    let n = 0;
    while (n < max) {
      walk.reset();
      const end = walk.match(s, 0);
      if (end !== null && end !== last) {
        n++;
        s = last = end;
      } else if (s < src.length) s++;
      else break;
      walk.tick();
      if (anchored) break;
    }
    return { start: null, end: null, count: n };
  });
};

/** A gmatch iteration followed step by step: `next()` walks to the next match as the iterator will. */
export class GmatchWalk {
  private position = 0;
  private last: number | null = null;

  constructor(
    private readonly src: Uint8Array,
    private readonly pattern: Uint8Array,
  ) {}

  /** The steps of the iterator's next call, counted up to `ceiling`. */
  next(ceiling: number): PatternWalk {
    const walk = new Walk(this.src, this.pattern, ceiling);
    try {
      for (let s = this.position; s <= this.src.length; s++) {
        walk.reset();
        const end = walk.match(s, 0);
        if (end !== null && end !== this.last) {
          if (walk.unfinished) throw new WalkEnded();
          this.position = this.last = end;
          return { steps: walk.steps, outcome: 'found', start: s, end, count: 1 };
        }
      }
      this.position = this.src.length + 1;
      return { steps: walk.steps, outcome: 'none', start: null, end: null, count: 0 };
    } catch (error) {
      return ended(walk, error);
    }
  }
}
