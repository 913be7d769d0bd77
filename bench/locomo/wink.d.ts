// Types for the two untyped wink packages used by the BM25 baseline (only what it calls).
declare module 'wink-bm25-text-search' {
  type PrepTask = (input: never) => unknown;
  interface WinkBm25Engine {
    defineConfig(config: { fldWeights: Record<string, number>; bm25Params?: { k1?: number; b?: number; k?: number } }): boolean;
    definePrepTasks(tasks: PrepTask[], field?: string): number;
    addDoc(doc: Record<string, string>, id: string): number;
    consolidate(freqPrecision?: number): boolean;
    /** [id, score] pairs, best first, at most `limit` (default 10). */
    search(text: string, limit?: number): [string, number][];
  }
  const createEngine: () => WinkBm25Engine;
  export default createEngine;
}

declare module 'wink-nlp-utils' {
  const nlp: {
    string: { lowerCase(s: string): string; tokenize0(s: string): string[] };
    tokens: { removeWords(tokens: string[]): string[] };
  };
  export default nlp;
}
