/**
 * What a projection is: a pure fold of recorded events into read-model tables.
 * A fold reads and writes its tables only through `ReadModelTx`, which the runner binds to
 * the transaction that also moves the projection's checkpoint; it never reads a clock,
 * a random source or anything outside its tables and the event.
 */
import type { HologramEventType, Recorded, RecordedEvent } from '../events/index.ts';

export type SqlValue = string | number | bigint | Uint8Array | null;

/** The only door a fold has to its read model. */
export interface ReadModelTx {
  run(sql: string, params?: readonly SqlValue[]): void;
  get<Row>(sql: string, params?: readonly SqlValue[]): Row | undefined;
  all<Row>(sql: string, params?: readonly SqlValue[]): Row[];
}

export type ReadModelTable = Readonly<{
  name: string;
  /** `CREATE TABLE` (and its indexes) for this table; run when the read model is (re)built. */
  ddl: string;
}>;

/** A recorded event of type `T`: typed by the catalog when the build declares `T` (tests fold types of their own). */
export type FoldedEvent<T extends string> = T extends HologramEventType ? Recorded<T> : RecordedEvent<T>;

/** A fold of the event types `T`: `evolve` sees only those, typed by the catalog. */
export type Projection<T extends string = HologramEventType> = Readonly<{
  name: string;
  /** Bump when the fold or the tables change: the read model is then rebuilt on start. */
  version: number;
  /** Event types the fold handles, or `'all'`. Other events only move the checkpoint. */
  handles: readonly T[] | 'all';
  tables: readonly ReadModelTable[];
  evolve(tx: ReadModelTx, event: FoldedEvent<T>): void;
  /** What the read model means, for people: printed by `homed replay --until` next to the tables. */
  view?: (tx: ReadModelTx) => unknown;
}>;

export const defineProjection = <T extends string>(projection: Projection<T>): Projection<T> => {
  if (!/^[a-z][a-z0-9_]*$/.test(projection.name)) {
    throw new Error(`projection name '${projection.name}' must be lower_snake_case (it prefixes table names)`);
  }
  for (const table of projection.tables) {
    if (!table.name.startsWith(`${projection.name}_`)) {
      throw new Error(`table '${table.name}' of projection '${projection.name}' must be named '${projection.name}_...'`);
    }
  }
  return projection;
};

export const projectionHandles = (projection: Projection<string>, type: string): boolean =>
  projection.handles === 'all' || (projection.handles as readonly string[]).includes(type);
