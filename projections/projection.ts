/**
 * What a projection is: a pure fold of recorded events into read-model tables.
 * A fold reads and writes its tables only through `ReadModelTx`, which the runner binds to
 * the transaction that also moves the projection's checkpoint; it never reads a clock,
 * a random source or anything outside its tables and the event.
 */
import type { RecordedEvent } from '../events/index.ts';

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

export type Projection = Readonly<{
  name: string;
  /** Bump when the fold or the tables change: the read model is then rebuilt on start. */
  version: number;
  /** Event types the fold handles, or `'all'`. Other events only move the checkpoint. */
  handles: readonly string[] | 'all';
  tables: readonly ReadModelTable[];
  evolve(tx: ReadModelTx, event: RecordedEvent): void;
  /** What the read model means, for people: printed by `homed replay --until` next to the tables. */
  view?: (tx: ReadModelTx) => unknown;
}>;

export const defineProjection = (projection: Projection): Projection => {
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

export const projectionHandles = (projection: Projection, type: string): boolean =>
  projection.handles === 'all' || projection.handles.includes(type);
