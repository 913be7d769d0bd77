/**
 * Binds a fold's `ReadModelTx` to a better-sqlite3 connection, caching prepared statements.
 * When asked, it also digests every write a fold makes, so a replay can point at the first
 * event whose writes differ (the projection trail).
 */
import { createHash, type Hash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import { encodePayload } from '../../events/index.ts';
import type { ReadModelTx, SqlValue } from '../../projections/index.ts';

export class SqliteReadModelTx implements ReadModelTx {
  private readonly statements = new Map<string, Statement>();
  private digest: Hash | undefined;

  constructor(private readonly db: SqliteDatabase) {}

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  run(sql: string, params: readonly SqlValue[] = []): void {
    this.statement(sql).run(...params);
    if (this.digest) this.digest.update(sql).update(encodePayload(params));
  }

  get<Row>(sql: string, params: readonly SqlValue[] = []): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all<Row>(sql: string, params: readonly SqlValue[] = []): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  /** Starts digesting the writes of one event; `endDigest` returns the digest. */
  beginDigest(): void {
    this.digest = createHash('sha256');
  }

  endDigest(): Buffer {
    const digest = this.digest!.digest();
    this.digest = undefined;
    return digest;
  }
}
