/**
 * Runs projections over a SQLite read model. Each batch of events is applied in one
 * transaction that also moves every checkpoint, so a crash leaves each read model exactly
 * at its checkpoint and catching up from there heals it. Inline mode applies inside the
 * append transaction; async mode tails the log.
 */
import type { SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { AnyEvent, EventStore, Recorded, RecordedEvent, Subscription } from '../../events/index.ts';
import { projectionHandles, type Projection } from '../../projections/index.ts';
import { PROJECTION_BOOKKEEPING_DDL, type CheckpointRow, type TrailRow } from './projectionTables.ts';
import { readModelChecksum, sortedRows } from './readModelChecksum.ts';
import { SqliteReadModelTx } from './sqliteReadModelTx.ts';

export type RunnerOptions = Readonly<{
  /** Record a digest of each event's writes (`projection_trail`), for `replay --verify`. */
  trail?: boolean;
  /**
   * `rebuildable`: the runner's own transactions skip the fsync (synchronous=NORMAL). A power
   * cut may lose the last of them, never the log: the read model is then behind its events and
   * catching up from its checkpoint heals it. The next durable append syncs them anyway.
   */
  durability?: 'durable' | 'rebuildable';
}>;

export type CatchUpOptions = Readonly<{
  toSeq?: number;
  batchSize?: number;
  onProgress?: (position: number, head: number) => void;
}>;

export class ProjectionFailed extends Error {
  readonly code = 'PROJECTION_FAILED';
  constructor(
    readonly projection: string,
    readonly seq: number,
    readonly eventType: string,
    cause: unknown,
  ) {
    super(
      `projection '${projection}' failed on event seq ${seq} (${eventType}): ${(cause as Error).message ?? cause}; ` +
        `its read model stays at its last checkpoint; fix the fold and restart (or run 'homed replay --verify')`,
      { cause },
    );
  }
}

export class ProjectionRunner {
  private readonly tx: SqliteReadModelTx;
  private readonly statements;

  constructor(
    readonly db: SqliteDatabase,
    readonly projections: readonly Projection<string>[],
    private readonly options: RunnerOptions = {},
  ) {
    const names = new Set<string>();
    for (const p of projections) {
      if (names.has(p.name)) throw new Error(`projection '${p.name}' is registered twice`);
      names.add(p.name);
    }
    db.exec(PROJECTION_BOOKKEEPING_DDL);
    this.tx = new SqliteReadModelTx(db);
    this.statements = {
      checkpoint: db.prepare<[string], CheckpointRow>('SELECT * FROM projection_checkpoints WHERE name = ?'),
      saveCheckpoint: db.prepare(
        'INSERT INTO projection_checkpoints (name, version, position) VALUES (?, ?, ?) ' +
          'ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position',
      ),
      trail: db.prepare('INSERT INTO projection_trail (name, seq, digest) VALUES (?, ?, ?)'),
    };
  }

  /**
   * Creates missing read models and rebuilds (truncates to position 0) every projection whose
   * stored version differs from its code. Returns the names reset that way.
   */
  prepare(): string[] {
    const reset: string[] = [];
    this.db.transaction(() => {
      for (const projection of this.projections) {
        const row = this.statements.checkpoint.get(projection.name);
        if (!row || row.version !== projection.version) {
          if (row) reset.push(projection.name);
          this.recreate(projection);
        }
      }
    })();
    return reset;
  }

  /** Drops and recreates a projection's tables and puts its checkpoint at 0. */
  private recreate(projection: Projection<string>): void {
    for (const table of projection.tables) this.db.exec(`DROP TABLE IF EXISTS "${table.name}"`);
    for (const table of projection.tables) this.db.exec(table.ddl);
    this.db.prepare('DELETE FROM projection_trail WHERE name = ?').run(projection.name);
    this.statements.saveCheckpoint.run(projection.name, projection.version, 0);
  }

  /** Truncates every read model to position 0 (the first step of a rebuild). */
  resetAll(): void {
    this.db.transaction(() => {
      for (const p of this.projections) this.recreate(p);
    })();
  }

  /** The lowest checkpoint: every event after it still has to be applied to some projection. */
  position(): number {
    let min = Infinity;
    for (const p of this.projections) min = Math.min(min, this.positionOf(p.name));
    return min === Infinity ? 0 : min;
  }

  /** Read from the checkpoint row each time: a rolled-back transaction can never leave a stale copy. */
  positionOf(name: string): number {
    const row = this.statements.checkpoint.get(name);
    if (!row) throw new Error(`projection '${name}' is not prepared; call prepare() first`);
    return row.position;
  }

  /** Applies events in order, in one transaction (a savepoint when already inside one). */
  apply(events: readonly RecordedEvent[]): void {
    if (events.length === 0) return;
    const transaction = this.db.transaction(() => {
      for (const projection of this.projections) this.applyTo(projection, events);
    });
    if (this.options.durability !== 'rebuildable' || this.db.inTransaction) {
      transaction();
      return;
    }
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      transaction();
    } finally {
      this.db.pragma(`synchronous = ${synchronous}`);
    }
  }

  private applyTo(projection: Projection<string>, events: readonly RecordedEvent[]): void {
    const from = this.positionOf(projection.name);
    const last = events[events.length - 1]!.seq;
    if (last <= from) return;
    if (events[0]!.seq > from + 1) {
      throw new Error(
        `projection '${projection.name}' is at seq ${from} but was handed events from seq ${events[0]!.seq}; ` +
          `catch it up from its checkpoint first`,
      );
    }
    for (const event of events) {
      if (event.seq <= from || !projectionHandles(projection, event.type)) continue;
      try {
        if (this.options.trail) this.tx.beginDigest();
        // The runner hands a projection only the types it handles, each validated at append.
        projection.evolve(this.tx, event as Recorded & RecordedEvent<string>);
        if (this.options.trail) this.statements.trail.run(projection.name, event.seq, this.tx.endDigest());
      } catch (error) {
        throw new ProjectionFailed(projection.name, event.seq, event.type, error);
      }
    }
    this.statements.saveCheckpoint.run(projection.name, projection.version, last);
  }

  /** Applies every event after the lowest checkpoint (up to `toSeq`), in batches. */
  async catchUp<E extends AnyEvent>(store: EventStore<E>, options: CatchUpOptions = {}): Promise<number> {
    const batchSize = options.batchSize ?? 2_000;
    const head = Math.min(await store.headSeq(), options.toSeq ?? Infinity);
    let position = this.position();
    while (position < head) {
      const events = await store.readAll({ fromSeq: position + 1, toSeq: head, maxCount: batchSize });
      if (events.length === 0) break;
      this.apply(events);
      position = events[events.length - 1]!.seq;
      options.onProgress?.(position, head);
    }
    return position;
  }

  /**
   * Inline mode: catches up synchronously, then moves the projections inside every append
   * transaction of `store`. Nothing can be appended between the two steps.
   */
  attachInline<E extends AnyEvent>(store: SqliteEventStore<E>): void {
    if (store.db !== this.db) throw new Error('inline projections must live in the event log database');
    for (;;) {
      const events = store.readRangeSync({ fromSeq: this.position() + 1, maxCount: 2_000 });
      if (events.length === 0) break;
      this.apply(events);
    }
    store.addInlineHandler((events) => this.apply(events));
  }

  /** Async mode: tail the log from the lowest checkpoint. */
  follow<E extends AnyEvent>(store: EventStore<E>, onError: (error: unknown) => void): Subscription {
    return store.subscribe({ afterSeq: this.position(), handler: (events) => this.apply(events), onError });
  }

  checksum(name: string): string {
    return readModelChecksum(this.db, this.projection(name));
  }

  checksums(): Record<string, string> {
    return Object.fromEntries(this.projections.map((p) => [p.name, readModelChecksum(this.db, p)]));
  }

  trail(name: string): TrailRow[] {
    return this.db.prepare('SELECT seq, digest FROM projection_trail WHERE name = ? ORDER BY seq').all(name) as TrailRow[];
  }

  /** Every table of a projection, rows sorted: what `replay --until` prints. */
  dump(name: string): Record<string, unknown> {
    const projection = this.projection(name);
    const tables = Object.fromEntries(projection.tables.map((t) => [t.name, sortedRows(this.db, t.name)]));
    return projection.view ? { view: projection.view(this.tx), ...tables } : tables;
  }

  private projection(name: string): Projection<string> {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`no projection named '${name}'; known: ${this.projections.map((p) => p.name).join(', ')}`);
    return projection;
  }
}
