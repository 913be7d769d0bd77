/** Bookkeeping tables shared by every projection: checkpoints and the write trail. */
export const PROJECTION_BOOKKEEPING_DDL = `
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name     TEXT PRIMARY KEY,
  version  INTEGER NOT NULL,
  position INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projection_trail (
  name   TEXT    NOT NULL,
  seq    INTEGER NOT NULL,
  digest BLOB    NOT NULL,
  PRIMARY KEY (name, seq)
) WITHOUT ROWID;
`;

export type CheckpointRow = { name: string; version: number; position: number };
export type TrailRow = { seq: number; digest: Buffer };
