/**
 * Vectors are a cache, never part of the event log: rows are keyed by (provider fingerprint,
 * sha256 of the text), so a provider only ever reads vectors of its own space, and the whole
 * table can be dropped and recomputed. Keep it in a rebuildable database, not the log's.
 */
import { createHash } from 'node:crypto';
import type { SqliteDatabase } from '../sqlite/openDatabase.ts';
import type { EmbeddingProvider } from './embeddingProvider.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vector_cache (
  fingerprint  TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vector       BLOB NOT NULL,
  PRIMARY KEY (fingerprint, content_hash)
) WITHOUT ROWID`;

export const contentHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Float32 values in host byte order (little-endian on every platform Node ships for). */
const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const fromBlob = (blob: Buffer): Float32Array => {
  const copy = new ArrayBuffer(blob.byteLength);
  new Uint8Array(copy).set(blob);
  return new Float32Array(copy);
};

export class VectorCache {
  private readonly select;
  private readonly upsert;
  private readonly deleteOthers;
  private readonly countRows;

  constructor(private readonly db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.select = db.prepare<[string, string], { vector: Buffer }>(
      'SELECT vector FROM vector_cache WHERE fingerprint = ? AND content_hash = ?',
    );
    this.upsert = db.prepare<[string, string, Buffer]>(
      'INSERT OR REPLACE INTO vector_cache (fingerprint, content_hash, vector) VALUES (?, ?, ?)',
    );
    this.deleteOthers = db.prepare<[string]>('DELETE FROM vector_cache WHERE fingerprint <> ?');
    this.countRows = db.prepare<[], { fingerprint: string; n: number }>(
      'SELECT fingerprint, count(*) AS n FROM vector_cache GROUP BY fingerprint',
    );
  }

  /**
   * One vector per text, in order. Texts already cached under `provider.fingerprint` are read
   * back; the rest are embedded in a single provider call and stored. Repeated texts share one
   * vector instance.
   *
   * @example const [v] = await cache.get(provider, ['hello'])
   */
  async get(provider: EmbeddingProvider, texts: readonly string[]): Promise<Float32Array[]> {
    const fp = provider.fingerprint;
    const hashes = texts.map(contentHash);
    const found = new Map<string, Float32Array>();
    const missing = new Map<string, string>(); // hash → text, first occurrence order
    hashes.forEach((hash, i) => {
      if (found.has(hash) || missing.has(hash)) return;
      const row = this.select.get(fp, hash);
      const vector = row === undefined ? undefined : fromBlob(row.vector);
      if (vector !== undefined && vector.length === provider.dimensions) found.set(hash, vector);
      else missing.set(hash, texts[i]!);
    });
    if (missing.size > 0) {
      const vectors = await provider.embedTexts([...missing.values()]);
      if (vectors.length !== missing.size) {
        throw new Error(`embedding provider '${fp}' returned ${vectors.length} vectors for ${missing.size} texts`);
      }
      const missedHashes = [...missing.keys()];
      this.db.transaction(() => {
        vectors.forEach((vector, i) => {
          if (vector.length !== provider.dimensions) {
            throw new Error(`embedding provider '${fp}' returned a vector of length ${vector.length}, declared ${provider.dimensions}`);
          }
          const hash = missedHashes[i]!;
          this.upsert.run(fp, hash, toBlob(vector));
          found.set(hash, vector);
        });
      })();
    }
    return hashes.map((hash) => found.get(hash)!);
  }

  /** Deletes every vector not of `keepFingerprint`'s space; returns how many rows went. */
  prune(keepFingerprint: string): number {
    return this.deleteOthers.run(keepFingerprint).changes;
  }

  /** Rows per fingerprint. */
  counts(): Map<string, number> {
    return new Map(this.countRows.all().map((r) => [r.fingerprint, r.n]));
  }
}
