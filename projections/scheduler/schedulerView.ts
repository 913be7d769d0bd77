/** What the scheduler holds now, read from its projection: the answer to PendingInputs(). */
import type { ReadModelTx } from '../projection.ts';

export type SchedulerView = Readonly<{
  inbox: string[];
  queue: string[];
  pending: string[];
  /** Suspended tasks, bottom first. */
  stack: string[];
  running: string | null;
  cancelBudget: string[];
}>;

const ids = (tx: ReadModelTx, where: string, order = 'queued_seq') =>
  tx.all<{ input_id: string }>(`SELECT input_id FROM scheduler_inputs WHERE ${where} ORDER BY ${order}`).map((r) => r.input_id);

export const readSchedulerView = (tx: ReadModelTx): SchedulerView => {
  const inbox = ids(tx, "status = 'inbox'");
  const queue = ids(tx, "status = 'queue'");
  const pending = ids(tx, "status = 'pending'", 'level DESC, queued_seq');
  // In the order of the lists above (inbox, queue, pending), as `schedulerViewOf` gives it.
  const budgeted = new Set(ids(tx, "cancel_requested = 1 AND status IN ('inbox', 'queue', 'pending')"));
  return {
    inbox,
    queue,
    pending,
    stack: ids(tx, "status = 'suspended'", 'stack_depth'),
    running: ids(tx, "status = 'running'")[0] ?? null,
    cancelBudget: [...inbox, ...queue, ...pending].filter((id) => budgeted.has(id)),
  };
};

/** Inputs that have arrived and not yet started: the inbox, the queue and waiting interrupts. */
export const pendingInputs = (view: SchedulerView): string[] => [...view.inbox, ...view.queue, ...view.pending];
