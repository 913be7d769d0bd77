/**
 * Finds where secret values are in a text. With a few values, each is looked for in turn
 * (`indexOf`, which skips ahead on long patterns); with many, one pass over the text looks at a
 * window of every value at once, so a vault of thousands of secrets costs about what a vault of a
 * few dozen does. Both find every place each value starts, overlapping ones too.
 */

/** Each secret's value, in each way it is written, with its name, longest first: what a scrub looks for. */
export type ScrubForms = readonly (readonly [name: string, form: string])[];

/** Where a value was found; `rank`, its place in the forms looked for (the earlier wins a tie). */
export type Found = Readonly<{ start: number; end: number; name: string; rank: number }>;

/** Up to this many forms, each is looked for in turn; past it, they are looked for in one pass. */
export const FORMS_LOOKED_FOR_IN_TURN = 16;
/** The window of each form hashed for the one pass: forms shorter than it are looked for in turn. */
const WINDOW = 12;
const BASE = 0x01000193;
const FILTER_BITS = 1 << 18;

/** BASE^WINDOW in 32 bits: what the char leaving the window weighs in its hash. */
const OUTGOING = (() => {
  let weight = 1;
  for (let i = 0; i < WINDOW; i++) weight = Math.imul(weight, BASE);
  return weight;
})();

const windowHash = (text: string, at: number): number => {
  let hash = 0;
  for (let i = at; i < at + WINDOW; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
};

/** A form found by the window at `offset` into it. */
type Entry = Readonly<{ name: string; form: string; rank: number; offset: number }>;

export class ValueFinder {
  private readonly inTurn: readonly Entry[];
  private readonly byWindow = new Map<number, Entry[]>();
  private readonly filter = new Uint32Array(FILTER_BITS / 32);

  constructor(forms: ScrubForms) {
    const entries = forms.map(([name, form], rank) => ({ name, form, rank, offset: 0 }));
    if (forms.length <= FORMS_LOOKED_FOR_IN_TURN) {
      this.inTurn = entries;
      return;
    }
    this.inTurn = entries.filter((e) => e.form.length < WINDOW);
    for (const entry of entries) {
      if (entry.form.length < WINDOW) continue;
      // The middle of a value: keys of one kind share how they begin (`sk-proj-`, `-----BEGIN`) and end.
      const offset = (entry.form.length - WINDOW) >> 1;
      const hash = windowHash(entry.form, offset);
      const bucket = this.byWindow.get(hash);
      if (bucket) bucket.push({ ...entry, offset });
      else this.byWindow.set(hash, [{ ...entry, offset }]);
      const bit = hash & (FILTER_BITS - 1);
      this.filter[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** Adds to `found` every place a form is in `text`, each ranked `rankFrom` on. */
  find(text: string, found: Found[], rankFrom = 0): Found[] {
    for (const { name, form, rank } of this.inTurn) {
      for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) {
        found.push({ start: at, end: at + form.length, name, rank: rankFrom + rank });
      }
    }
    if (this.byWindow.size === 0 || text.length < WINDOW) return found;
    const { filter, byWindow } = this;
    let hash = windowHash(text, 0);
    for (let at = 0; ; at++) {
      const bit = hash & (FILTER_BITS - 1);
      if ((filter[bit >>> 5]! & (1 << (bit & 31))) !== 0) {
        for (const { name, form, rank, offset } of byWindow.get(hash) ?? []) {
          const start = at - offset;
          if (start >= 0 && text.startsWith(form, start)) found.push({ start, end: start + form.length, name, rank: rankFrom + rank });
        }
      }
      if (at + WINDOW >= text.length) return found;
      hash = (Math.imul(hash, BASE) - Math.imul(text.charCodeAt(at), OUTGOING) + text.charCodeAt(at + WINDOW)) | 0;
    }
  }
}

const finders = new WeakMap<ScrubForms, ValueFinder>();

/** The finder of `forms`, made once per list. */
export const finderOf = (forms: ScrubForms): ValueFinder => {
  let finder = finders.get(forms);
  if (!finder) {
    finder = new ValueFinder(forms);
    finders.set(forms, finder);
  }
  return finder;
};
