/**
 * The seam between the LoCoMo harness and what it measures: turns go in (in order, with their
 * virtual time), ranked items citing source turns come out. One fresh instance per conversation.
 */

/** One dialogue turn as fed to a system; `at` is epoch ms derived from the session date. */
export type LocomoTurn = Readonly<{
  conversation: string;
  session: number;
  diaId: string;
  speaker: string;
  text: string;
  /** ms since the epoch (UTC): the session's date plus one second per turn index. */
  at: number;
  imageCaption?: string;
}>;

/** One recalled item; `cites` are the dia_ids it stands for, in the item's own order. */
export type RecalledItem = Readonly<{ text: string; cites: readonly string[]; score: number }>;

export interface RecallSystem {
  readonly name: string;
  /** A fresh instance per conversation. */
  ingest(turn: LocomoTurn): Promise<void>;
  /** Called once after the last turn (e.g. to let heartbeats run to the end time). */
  finishIngest(at: number): Promise<void>;
  recall(question: string, k: number): Promise<readonly RecalledItem[]>;
  close(): Promise<void>;
}

export type RecallSystemFactory = (conversation: string) => Promise<RecallSystem>;
