/**
 * The scheduler's read model: every input with where it is now (inbox, queue, pending,
 * running, suspended on the stack, or how it ended). It applies the scheduler's decisions;
 * it never re-decides.
 */
import { schedulerEvents, typesOf } from '../../events/index.ts';
import { defineProjection } from '../projection.ts';
import { pendingInputs, readSchedulerView } from './schedulerView.ts';

export type InputStatus = 'inbox' | 'queue' | 'pending' | 'running' | 'suspended' | 'completed' | 'short_circuited' | 'offloaded';

const setStatus = (status: InputStatus) => `UPDATE scheduler_inputs SET status = '${status}', changed_seq = ? WHERE input_id = ?`;

export const schedulerProjection = defineProjection({
  name: 'scheduler',
  version: 1,
  view: (tx) => {
    const view = readSchedulerView(tx);
    return { pendingInputs: pendingInputs(view), ...view };
  },
  handles: typesOf(schedulerEvents),
  tables: [
    {
      name: 'scheduler_inputs',
      ddl: `CREATE TABLE scheduler_inputs (
        input_id TEXT PRIMARY KEY, source TEXT NOT NULL, origin TEXT NOT NULL, kind TEXT NOT NULL,
        declared_level INTEGER, level INTEGER NOT NULL, status TEXT NOT NULL, queued_seq INTEGER NOT NULL,
        preempt_count INTEGER NOT NULL DEFAULT 0, stack_depth INTEGER, outcome TEXT,
        cancel_requested INTEGER NOT NULL DEFAULT 0, changed_seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX scheduler_inputs_status ON scheduler_inputs (status, queued_seq)`,
    },
  ],
  evolve(tx, event) {
    const seq = event.seq;
    switch (event.type) {
      case 'InputQueued': {
        const d = event.data;
        tx.run(
          `INSERT INTO scheduler_inputs (input_id, source, origin, kind, declared_level, level, status, queued_seq, changed_seq)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [d.inputId, d.source, d.origin, d.kind, d.declaredLevel ?? null, d.level, d.where, seq, seq],
        );
        return;
      }
      case 'InboxPumped':
        for (const id of event.data.inputIds) tx.run(setStatus('queue'), [seq, id]);
        return;
      case 'TaskStarted':
        tx.run(setStatus('running'), [seq, event.data.taskId]);
        return;
      case 'TaskPreempted':
        tx.run(`UPDATE scheduler_inputs SET status = 'suspended', preempt_count = ?, stack_depth = ?, changed_seq = ? WHERE input_id = ?`, [
          event.data.preemptCount,
          event.data.stackDepth,
          seq,
          event.data.taskId,
        ]);
        return;
      case 'TaskResumed':
        tx.run(`UPDATE scheduler_inputs SET status = 'running', stack_depth = NULL, changed_seq = ? WHERE input_id = ?`, [
          seq,
          event.data.taskId,
        ]);
        return;
      case 'TaskCompleted':
        tx.run(`UPDATE scheduler_inputs SET status = 'completed', outcome = ?, changed_seq = ? WHERE input_id = ?`, [
          event.data.outcome,
          seq,
          event.data.taskId,
        ]);
        return;
      case 'StopRequested':
        for (const id of event.data.cancelBudget) {
          tx.run('UPDATE scheduler_inputs SET cancel_requested = 1, changed_seq = ? WHERE input_id = ?', [seq, id]);
        }
        return;
      case 'InputShortCircuited':
        tx.run(setStatus('short_circuited'), [seq, event.data.inputId]);
        return;
      case 'BacklogOffloaded':
        for (const id of event.data.inputIds) tx.run(setStatus('offloaded'), [seq, id]);
        return;
      case 'BacklogAcknowledged':
        return; // told busy, still queued: the input's status does not change
      case 'SchedulerRulesAdopted':
        return; // how later decisions are made, not where any input is
      default: {
        const unhandled: never = event;
        throw new Error(`scheduler projection: unhandled event ${(unhandled as { type: string }).type}`);
      }
    }
  },
});
