/**
 * The kernel's modules as the log last saw them: status, layer, facilities, last error; and each
 * boot (run). The effects the kernel asks for (a layer to start, a module to stop) change nothing here.
 */
import { defineProjection } from '../projection.ts';

export type ModuleStatus = 'started' | 'failed' | 'stopped';

export const modulesProjection = defineProjection({
  name: 'kernel',
  version: 1,
  handles: ['KernelStarted', 'ModuleStarted', 'ModuleFailed', 'ModuleStopped', 'KernelStopped'],
  tables: [
    {
      name: 'kernel_modules',
      ddl: `CREATE TABLE kernel_modules (
        module TEXT PRIMARY KEY, status TEXT NOT NULL, layer INTEGER, provides TEXT NOT NULL,
        error TEXT, changed_seq INTEGER NOT NULL, changed_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
    },
    {
      name: 'kernel_runs',
      ddl: `CREATE TABLE kernel_runs (
        started_seq INTEGER PRIMARY KEY, pid INTEGER NOT NULL, started_at INTEGER NOT NULL,
        stopped_at INTEGER, stop_reason TEXT
      )`,
    },
  ],
  evolve(tx, event) {
    const at = event.at;
    switch (event.type) {
      case 'KernelStarted':
        tx.run('INSERT INTO kernel_runs (started_seq, pid, started_at) VALUES (?, ?, ?)', [event.seq, event.data.pid, at]);
        return;
      case 'KernelStopped':
        tx.run('UPDATE kernel_runs SET stopped_at = ?, stop_reason = ? WHERE started_seq = (SELECT max(started_seq) FROM kernel_runs)', [
          at,
          event.data.reason,
        ]);
        return;
      case 'ModuleStarted':
        tx.run(
          `INSERT INTO kernel_modules (module, status, layer, provides, error, changed_seq, changed_at)
           VALUES (?, 'started', ?, ?, NULL, ?, ?)
           ON CONFLICT (module) DO UPDATE SET status = 'started', layer = excluded.layer,
             provides = excluded.provides, error = NULL, changed_seq = excluded.changed_seq, changed_at = excluded.changed_at`,
          [event.data.module, event.data.layer, event.data.provides.join(','), event.seq, at],
        );
        return;
      case 'ModuleFailed':
        tx.run(
          `INSERT INTO kernel_modules (module, status, layer, provides, error, changed_seq, changed_at)
           VALUES (?, 'failed', ?, '', ?, ?, ?)
           ON CONFLICT (module) DO UPDATE SET status = 'failed', layer = excluded.layer, error = excluded.error,
             changed_seq = excluded.changed_seq, changed_at = excluded.changed_at`,
          [event.data.module, event.data.layer, event.data.error, event.seq, at],
        );
        return;
      case 'ModuleStopped':
        tx.run(`UPDATE kernel_modules SET status = 'stopped', error = ?, changed_seq = ?, changed_at = ? WHERE module = ?`, [
          event.data.error ?? null,
          event.seq,
          at,
          event.data.module,
        ]);
        return;
      default: {
        const unhandled: never = event;
        throw new Error(`kernel projection: unhandled event ${(unhandled as { type: string }).type}`);
      }
    }
  },
});
