/** Which streams the log holds, as the stream catalog last recorded them: for listings and did-you-mean. */
import type { ReadModelTx } from '../projection.ts';

export type StreamEntry = Readonly<{ stream: string; version: number; lastType: string }>;

/** Every stream with its event count and latest type, in the order they began. */
export const streamCatalog = (tx: ReadModelTx): StreamEntry[] =>
  tx
    .all<{ stream: string; version: number; last_type: string }>(
      'SELECT stream, version, last_type FROM streams_catalog ORDER BY first_seq',
    )
    .map((r) => ({ stream: r.stream, version: r.version, lastType: r.last_type }));
