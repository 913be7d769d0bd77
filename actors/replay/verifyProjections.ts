/**
 * `replay --verify`: rebuilds every projection and compares it with the live read model at
 * the live checkpoint. A difference is located by the projection trail (a digest of each
 * event's writes): the first sequence whose writes differ is the first divergence.
 */
import type { SqliteDatabase } from '../../adapters/sqlite/openDatabase.ts';
import type { AnyEvent, EventStore } from '../../events/index.ts';
import type { Projection } from '../../projections/index.ts';
import type { CheckpointRow, TrailRow } from '../projections/projectionTables.ts';
import { readModelChecksum } from '../projections/readModelChecksum.ts';
import { startRebuild } from './rebuildProjections.ts';

export type ProjectionVerdict = Readonly<
  | { projection: string; status: 'match'; position: number; checksum: string }
  | { projection: string; status: 'diverged'; position: number; firstDivergingSeq: number | null; detail: string }
  | { projection: string; status: 'not-comparable'; detail: string }
>;

const liveCheckpoint = (live: SqliteDatabase, name: string): CheckpointRow | undefined => {
  const exists = live.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'projection_checkpoints'").get();
  if (!exists) return undefined;
  return live.prepare('SELECT * FROM projection_checkpoints WHERE name = ?').get(name) as CheckpointRow | undefined;
};

const trailOf = (db: SqliteDatabase, name: string, upTo: number): TrailRow[] =>
  db.prepare('SELECT seq, digest FROM projection_trail WHERE name = ? AND seq <= ? ORDER BY seq').all(name, upTo) as TrailRow[];

/** The first sequence where two trails differ (an entry missing on one side counts). */
export const firstTrailDifference = (expected: readonly TrailRow[], actual: readonly TrailRow[]): number | null => {
  const length = Math.max(expected.length, actual.length);
  for (let i = 0; i < length; i++) {
    const a = expected[i];
    const b = actual[i];
    if (!a || !b) return (a ?? b)!.seq;
    if (a.seq !== b.seq) return Math.min(a.seq, b.seq);
    if (!Buffer.from(a.digest).equals(Buffer.from(b.digest))) return a.seq;
  }
  return null;
};

export const verifyProjections = async <E extends AnyEvent>(
  store: EventStore<E>,
  live: SqliteDatabase,
  projections: readonly Projection<string>[],
  onProgress?: (position: number, head: number) => void,
): Promise<ProjectionVerdict[]> => {
  const verdicts = new Map<string, ProjectionVerdict>();
  const comparable: { projection: Projection<string>; position: number }[] = [];
  for (const projection of projections) {
    const checkpoint = liveCheckpoint(live, projection.name);
    if (!checkpoint) {
      verdicts.set(projection.name, {
        projection: projection.name,
        status: 'not-comparable',
        detail: 'the live read model was never built (start homed once)',
      });
    } else if (checkpoint.version !== projection.version) {
      verdicts.set(projection.name, {
        projection: projection.name,
        status: 'not-comparable',
        detail: `the live read model is at version ${checkpoint.version}, this build at ${projection.version}; homed rebuilds it at its next start`,
      });
    } else {
      comparable.push({ projection, position: checkpoint.position });
    }
  }
  const rebuild = startRebuild(store, projections, { trail: true, ...(onProgress ? { onProgress } : {}) });
  try {
    for (const { projection, position } of [...comparable].sort((a, b) => a.position - b.position)) {
      await rebuild.advanceTo(position);
      const expected = readModelChecksum(rebuild.db, projection);
      const actual = readModelChecksum(live, projection);
      if (expected === actual) {
        verdicts.set(projection.name, { projection: projection.name, status: 'match', position, checksum: expected });
        continue;
      }
      const seq = firstTrailDifference(trailOf(rebuild.db, projection.name, position), trailOf(live, projection.name, position));
      verdicts.set(projection.name, {
        projection: projection.name,
        status: 'diverged',
        position,
        firstDivergingSeq: seq,
        detail:
          seq === null
            ? `checksums differ at seq ${position} although every write of the fold matched: its tables were changed outside the fold`
            : `the fold's writes for event seq ${seq} differ from what the live daemon wrote`,
      });
    }
  } finally {
    rebuild.close();
  }
  return projections.map((p) => verdicts.get(p.name)!);
};
