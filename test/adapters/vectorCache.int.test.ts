/** The SQLite vector cache: embeds only misses, keeps spaces apart by fingerprint, prunes. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryTokenizer } from '../../actors/memory/lexicon.ts';
import { LexicalProvider, VectorCache, type EmbeddingProvider } from '../../adapters/embeddings/index.ts';
import { openDatabase, type SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

/** Wraps a provider and records every batch it is asked to embed. */
const counting = (inner: EmbeddingProvider): EmbeddingProvider & { calls: string[][] } => {
  const calls: string[][] = [];
  return {
    calls,
    fingerprint: inner.fingerprint,
    dimensions: inner.dimensions,
    modalities: inner.modalities,
    embedTexts: async (texts) => {
      calls.push([...texts]);
      return inner.embedTexts(texts);
    },
  };
};

/** A provider of another space with the same dimensions: every vector is e0. */
const constantProvider = (fingerprint: string, dimensions: number): EmbeddingProvider & { calls: number } => {
  const p = {
    calls: 0,
    fingerprint,
    dimensions,
    modalities: ['text'] as const,
    embedTexts: async (texts: readonly string[]) => {
      p.calls++;
      return texts.map(() => {
        const v = new Float32Array(dimensions);
        v[0] = 1;
        return v;
      });
    },
  };
  return p;
};

const open = (path: string): SqliteDatabase => openDatabase(path, { durability: 'rebuildable' });

describe('VectorCache', () => {
  it('embeds only the misses, once per distinct text, and serves repeats from SQLite', async () => {
    const db = open(join(tempDir(), 'vectors.db'));
    const cache = new VectorCache(db);
    const lexical = new LexicalProvider({ tokenizer: memoryTokenizer });
    const provider = counting(lexical);

    const first = await cache.get(provider, ['dog park', 'hotpot 火锅', 'dog park']);
    expect(provider.calls).toEqual([['dog park', 'hotpot 火锅']]);
    expect(first).toHaveLength(3);
    expect(first[0]).toEqual(lexical.embedText('dog park'));
    expect(first[2]).toEqual(first[0]);

    const second = await cache.get(provider, ['hotpot 火锅', 'dog park']);
    expect(provider.calls).toHaveLength(1); // nothing embedded
    expect(second).toEqual([first[1], first[0]]);

    await cache.get(provider, ['dog park', 'new text']);
    expect(provider.calls[1]).toEqual(['new text']);
    db.close();
  });

  it('keeps vectors across reopening the database', async () => {
    const path = join(tempDir(), 'vectors.db');
    const provider = counting(new LexicalProvider({ tokenizer: memoryTokenizer }));
    const db1 = open(path);
    const [v] = await new VectorCache(db1).get(provider, ['pottery class']);
    db1.close();
    const db2 = open(path);
    const [again] = await new VectorCache(db2).get(provider, ['pottery class']);
    expect(provider.calls).toHaveLength(1);
    expect(again).toEqual(v);
    db2.close();
  });

  it('never hands one space the vectors of another: a new fingerprint re-embeds', async () => {
    const db = open(join(tempDir(), 'vectors.db'));
    const cache = new VectorCache(db);
    const lexical = counting(new LexicalProvider({ tokenizer: memoryTokenizer }));
    await cache.get(lexical, ['a walk by the lake', 'sunrise painting']);

    const other = constantProvider('fake-space:v1', lexical.dimensions);
    const vectors = await cache.get(other, ['a walk by the lake', 'sunrise painting']);
    expect(other.calls).toBe(1);
    for (const v of vectors) expect(v[0]).toBe(1);

    const smaller = counting(new LexicalProvider({ tokenizer: memoryTokenizer, dimensions: 256 }));
    const [small] = await cache.get(smaller, ['a walk by the lake']);
    expect(smaller.calls).toEqual([['a walk by the lake']]);
    expect(small).toHaveLength(256);

    await cache.get(lexical, ['a walk by the lake', 'sunrise painting']);
    expect(lexical.calls).toHaveLength(1); // its own rows are still there
    db.close();
  });

  it('prune(keep) deletes every other space and leaves the kept one', async () => {
    const db = open(join(tempDir(), 'vectors.db'));
    const cache = new VectorCache(db);
    const keep = counting(new LexicalProvider({ tokenizer: memoryTokenizer }));
    const old = counting(new LexicalProvider({ tokenizer: memoryTokenizer, dimensions: 512 }));
    await cache.get(keep, ['one', 'two']);
    await cache.get(old, ['one', 'two', 'three']);
    expect(cache.counts()).toEqual(
      new Map([
        [keep.fingerprint, 2],
        [old.fingerprint, 3],
      ]),
    );

    expect(cache.prune(keep.fingerprint)).toBe(3);
    expect(cache.counts()).toEqual(new Map([[keep.fingerprint, 2]]));
    await cache.get(keep, ['one', 'two']);
    expect(keep.calls).toHaveLength(1);
    await cache.get(old, ['one']);
    expect(old.calls).toHaveLength(2); // recomputed after the prune
    db.close();
  });

  it('refuses a provider that breaks its contract, and stores nothing from that call', async () => {
    const db = open(join(tempDir(), 'vectors.db'));
    const cache = new VectorCache(db);
    const liar: EmbeddingProvider = {
      fingerprint: 'liar:v1',
      dimensions: 4,
      modalities: ['text'],
      embedTexts: async (texts) => texts.map((_, i) => new Float32Array(i === 0 ? 4 : 3)),
    };
    await expect(cache.get(liar, ['a', 'b'])).rejects.toThrow(/length 3, declared 4/);
    expect(cache.counts().get('liar:v1')).toBeUndefined();
    const short: EmbeddingProvider = { ...liar, fingerprint: 'short:v1', embedTexts: async () => [] };
    await expect(cache.get(short, ['a'])).rejects.toThrow(/returned 0 vectors for 1 texts/);
    db.close();
  });
});
