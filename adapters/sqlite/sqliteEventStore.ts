/**
 * The SQLite dialect of the EventStore (better-sqlite3; kysely builds the reads).
 * Durability: WAL + synchronous=FULL, so an append whose promise resolved is on disk.
 * Group commit: appends issued while a commit is pending share one transaction (one fsync),
 * each in its own savepoint, so one append's conflict never fails another.
 */
import { Kysely, SqliteDialect } from 'kysely';
import {
  assertExpectedVersion,
  assertStreamName,
  DuplicateEventId,
  encodePayload,
  decodePayload,
  EventLogUnavailable,
  EventStoreClosed,
  MAX_POSITION,
  matchReappend,
  prepareEvents,
  startTailSubscription,
  type AnyEvent,
  type AppendOptions,
  type AppendResult,
  type HologramEvent,
  type NewEventOf,
  type RecordedEventOf,
  type Clock,
  type EventCatalog,
  type EventStore,
  type IdSource,
  type PreparedEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../events/index.ts';
import { rawRowToEvent, rowToEvent, type EventRow, type RawEventRow } from './eventRows.ts';
import { EVENT_LOG_DDL, type EventLogSchema } from './eventTables.ts';
import { openDatabase, type SqliteDatabase } from './openDatabase.ts';

/** Runs inside the append transaction, after the events are inserted (inline projections). */
export type InlineHandler<E extends AnyEvent = HologramEvent> = (events: readonly RecordedEventOf<E>[]) => void;

export type SqliteEventStoreOptions = Readonly<{
  catalog: EventCatalog;
  clock: Clock;
  ids: IdSource;
  /** How often a tailing subscriber looks for appends made by another process. */
  pollIntervalMs?: number;
  /**
   * Asked when an append met a full disk: true when it freed room (the daemon's reserve for the
   * log), and the appends that met it are tried once more; false leaves them failed.
   */
  whenFull?: () => boolean;
}>;

type AppendOutcome = { ok: true; result: AppendResult<AnyEvent> } | { ok: false; error: unknown };

/** SQLite's answer when the disk (or the database's page limit) has no room for a write. */
const diskFull = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'SQLITE_FULL';

type PendingAppend = {
  stream: string;
  events: readonly NewEventOf<AnyEvent>[];
  prepared: PreparedEvent[];
  options: AppendOptions;
  resolve: (result: AppendResult<AnyEvent>) => void;
  reject: (error: unknown) => void;
};

export class SqliteEventStore<E extends AnyEvent = HologramEvent> implements EventStore<E> {
  readonly db: SqliteDatabase;
  private readonly kysely: Kysely<EventLogSchema>;
  private readonly inline: InlineHandler<AnyEvent>[] = [];
  private readonly subscriptions = new Set<Subscription>();
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private wake: (() => void)[] = [];
  private closed = false;
  private readonly statements;

  static open<E extends AnyEvent = HologramEvent>(path: string, options: SqliteEventStoreOptions): SqliteEventStore<E> {
    return new SqliteEventStore<E>(openDatabase(path), options);
  }

  constructor(
    db: SqliteDatabase,
    private readonly options: SqliteEventStoreOptions,
  ) {
    this.db = db;
    db.exec(EVENT_LOG_DDL);
    this.kysely = new Kysely<EventLogSchema>({ dialect: new SqliteDialect({ database: db }) });
    this.statements = {
      head: db.prepare<[], { head: number | null }>('SELECT max(seq) AS head FROM events'),
      streamVersion: db.prepare<[string], { version: number | null }>('SELECT max(version) AS version FROM events WHERE stream = ?'),
      byId: db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?'),
      range: db
        .prepare<[number, number, number], RawEventRow>(
          'SELECT seq, stream, version, id, type, schema_version, at, causation, correlation, data ' +
            'FROM events WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
        )
        .raw(true),
      insert: db.prepare(
        'INSERT INTO events (seq, stream, version, id, type, schema_version, at, causation, correlation, data) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  /** Registers a handler run inside every append transaction (inline projections). */
  addInlineHandler(handler: InlineHandler<E>): void {
    this.inline.push(handler as InlineHandler<AnyEvent>);
  }

  append(stream: string, events: readonly NewEventOf<E>[], options: AppendOptions = {}): Promise<AppendResult<E>> {
    try {
      this.assertOpen();
      assertStreamName(stream);
      if (events.length === 0) throw new RangeError(`append to '${stream}' needs at least one event`);
      const prepared = prepareEvents(this.options.catalog, events, this.options.clock, this.options.ids);
      return new Promise<AppendResult<E>>((resolve, reject) => {
        this.pending.push({ stream, events, prepared, options, resolve: resolve as (result: AppendResult<AnyEvent>) => void, reject });
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          queueMicrotask(() => this.flush());
        }
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes = this.commitGroup(batch);
    // A full disk, once the reserve kept for the log is freed, is tried once more: an append is
    // kept by its events' ids, so one that did reach the log is found there, not added twice.
    const full = batch.flatMap((item, i) => (!outcomes[i]!.ok && diskFull(outcomes[i]!.error) ? [i] : []));
    if (full.length > 0 && this.options.whenFull?.()) {
      const again = this.commitGroup(full.map((i) => batch[i]!));
      full.forEach((i, j) => {
        outcomes[i] = again[j]!;
      });
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.result);
      else item.reject(outcome.error);
    });
    if (outcomes.some((outcome) => outcome.ok)) for (const resolve of this.wake.splice(0)) resolve();
  }

  /** Appends `batch` in one transaction, each in a savepoint of its own: what became of each (all failed when the commit did). */
  private commitGroup(batch: readonly PendingAppend[]): AppendOutcome[] {
    const outcomes: AppendOutcome[] = [];
    const appendOne = this.db.transaction((item: PendingAppend) => this.appendInTransaction(item));
    const commitGroup = this.db.transaction(() => {
      for (const item of batch) {
        try {
          outcomes.push({ ok: true, result: appendOne(item) });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
    });
    try {
      commitGroup.immediate();
    } catch (error) {
      // SQLite rolls the whole transaction back on a full disk met inside it: the commit then finds none. That is why it failed.
      const full = outcomes.find((outcome) => !outcome.ok && diskFull(outcome.error));
      const cause = full && !full.ok ? full.error : error;
      return batch.map(() => ({ ok: false, error: cause }));
    }
    return outcomes;
  }

  private appendInTransaction(item: PendingAppend): AppendResult<AnyEvent> {
    const { stream, prepared } = item;
    const current = this.statements.streamVersion.get(stream)?.version ?? 0;
    // Only the first id decides a retry (matchReappend); a later stored id trips the unique
    // index below. One lookup per append instead of one per event keeps batches cheap.
    const firstStored = this.statements.byId.get(prepared[0]!.id);
    if (firstStored) {
      const stored = prepared.map((e, i) => (i === 0 ? firstStored : this.statements.byId.get(e.id)));
      const retry = matchReappend(
        stream,
        item.events,
        stored.map((row) => row && rowToEvent(row, this.options.catalog)),
      )!;
      return { nextVersion: current, lastSeq: retry[retry.length - 1]!.seq, events: retry, alreadyStored: true };
    }
    assertExpectedVersion(stream, item.options.expectedVersion ?? 'any', current);
    const head = this.statements.head.get()?.head ?? 0;
    const recorded: RecordedEvent[] = [];
    const inlineEvents: RecordedEvent[] = [];
    for (let i = 0; i < prepared.length; i++) {
      const event = prepared[i]!;
      const bytes = encodePayload(event.data);
      const seq = head + 1 + i;
      const version = current + 1 + i;
      try {
        this.statements.insert.run(
          seq,
          stream,
          version,
          event.id,
          event.type,
          event.schemaVersion,
          event.at,
          event.causation,
          event.correlation,
          bytes,
        );
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
          const clash = this.statements.byId.get(event.id);
          if (clash) throw new DuplicateEventId(event.id, clash.seq);
        }
        throw error;
      }
      // Field by field: on Node 20 a spread plus extra keys costs microseconds per event here.
      const base: RecordedEvent = {
        seq,
        stream,
        version,
        id: event.id,
        type: event.type,
        schemaVersion: event.schemaVersion,
        at: event.at,
        causation: event.causation,
        correlation: event.correlation,
        data: event.data,
      };
      recorded.push(base);
      if (this.inline.length > 0) {
        inlineEvents.push({
          seq,
          stream,
          version,
          id: event.id,
          type: event.type,
          schemaVersion: event.schemaVersion,
          at: event.at,
          causation: event.causation,
          correlation: event.correlation,
          data: decodePayload(bytes),
        });
      }
    }
    for (const handler of this.inline) handler(inlineEvents);
    return { nextVersion: current + prepared.length, lastSeq: head + prepared.length, events: recorded, alreadyStored: false };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<readonly RecordedEventOf<E>[]> {
    this.assertOpen();
    let query = this.kysely
      .selectFrom('events')
      .selectAll()
      .where('stream', '=', stream)
      .where('version', '>=', options.fromVersion ?? 1)
      .orderBy('version');
    if (options.maxCount !== undefined) query = query.limit(options.maxCount);
    const rows = (await this.damageChecked(() => query.execute())) as EventRow[];
    return rows.map((row) => rowToEvent(row, this.options.catalog)) as RecordedEventOf<E>[];
  }

  async readAll<T extends E['type'] = E['type']>(
    options: ReadAllOptions<T> = {},
  ): Promise<readonly RecordedEventOf<Extract<E, { type: T }>>[]> {
    const events =
      options.types === undefined && options.stream === undefined
        ? this.readRangeSync(options)
        : (await this.readAllRows(options)).map((row) => rowToEvent(row, this.options.catalog));
    return events as RecordedEventOf<Extract<E, { type: T }>>[];
  }

  /**
   * The hot path of catch-up and replay: one prepared statement, rows as arrays. Synchronous,
   * so a caller can catch up and attach an inline handler with no append in between.
   */
  readRangeSync(options: Pick<ReadAllOptions, 'fromSeq' | 'toSeq' | 'maxCount'> = {}): RecordedEventOf<E>[] {
    this.assertOpen();
    const rows = this.damageChecked(() =>
      this.statements.range.all(options.fromSeq ?? 1, options.toSeq ?? MAX_POSITION, options.maxCount ?? -1),
    );
    return rows.map((row) => rawRowToEvent(row, this.options.catalog)) as RecordedEventOf<E>[];
  }

  /** Rows as stored, payload undecoded: for `homed log --raw` and for diagnosing damage. */
  async readAllRows(options: ReadAllOptions = {}): Promise<EventRow[]> {
    this.assertOpen();
    let query = this.kysely
      .selectFrom('events')
      .selectAll()
      .where('seq', '>=', options.fromSeq ?? 1)
      .orderBy('seq');
    if (options.toSeq !== undefined) query = query.where('seq', '<=', options.toSeq);
    if (options.stream !== undefined) query = query.where('stream', '=', options.stream);
    if (options.types !== undefined) {
      if (options.types.length === 0) return [];
      query = query.where('type', 'in', [...options.types]);
    }
    if (options.maxCount !== undefined) query = query.limit(options.maxCount);
    return (await this.damageChecked(() => query.execute())) as EventRow[];
  }

  async headSeq(): Promise<number> {
    this.assertOpen();
    return this.statements.head.get()?.head ?? 0;
  }

  async streamVersion(stream: string): Promise<number> {
    this.assertOpen();
    return this.statements.streamVersion.get(stream)?.version ?? 0;
  }

  subscribe(options: SubscribeOptions<E>): Subscription {
    this.assertOpen();
    const pollMs = this.options.pollIntervalMs ?? 250;
    const subscription = startTailSubscription(
      {
        read: (afterSeq, maxCount) => Promise.resolve(this.readRangeSync({ fromSeq: afterSeq + 1, maxCount })),
        waitForAppend: () =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollMs);
            timer.unref();
            this.wake.push(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
      },
      options,
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Finishes pending appends, stops subscribers, checkpoints the WAL and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.closed = true;
    for (const resolve of this.wake.splice(0)) resolve();
    await this.kysely.destroy(); // closes the handle only if kysely ever ran a query on it
    if (this.db.open) this.db.close(); // so close it here: that checkpoints the WAL and releases the file
  }

  /** Turns SQLite's report of a damaged file into a typed error that says what to do. */
  private damageChecked<T>(read: () => T): T {
    const explain = (error: unknown): never => {
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
        throw new EventLogUnavailable(
          `the event log ${this.db.name} is damaged (${(error as Error).message}); ` +
            `restore the data dir from a backup; 'homed log --raw' shows what can still be read`,
          { cause: error },
        );
      }
      throw error;
    };
    try {
      const result = read();
      return result instanceof Promise ? (result.catch(explain) as T) : result;
    } catch (error) {
      return explain(error);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreClosed();
  }
}
