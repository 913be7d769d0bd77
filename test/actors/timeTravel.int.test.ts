/**
 * Time travel over a real daemon's log (in process, virtual time): at a seq while a reply was
 * being written, every actor is there as it stood (the kernel's boot, the scheduler busy, the
 * turn open, each plugin's supervisor, the memory's heartbeat loops) and none diverged; at the
 * end the scheduler is idle and the turn over; at the first event only the boot had begun.
 */
import { describe, expect, it } from 'vitest';
import { TimeTravel } from '../../actors/index.ts';
import { existingLogPath, openEventLog } from '../../cli/dataDir.ts';
import { REPLAYERS } from '../../cli/replayers.ts';
import { settle } from '../support/daemonQuiescence.ts';
import { step } from '../support/daemonRun.ts';
import { drainDaemon } from '../support/drainDaemon.ts';
import { InProcessDaemon } from '../support/inProcessDaemon.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

describe('time travel', () => {
  it('shows every actor as it stood at a seq, from the same replayers verify runs', async () => {
    const daemon = new InProcessDaemon({ root: tempDir() });
    let during = 0;
    try {
      await daemon.boot();
      await settle(daemon);
      await step(daemon, () => daemon.ask('hi')); // the model's answer is held: the turn is open
      during = await daemon.store.headSeq();
      await drainDaemon(daemon);
      await daemon.stop();
    } finally {
      await daemon.dispose();
    }
    const store = openEventLog(existingLogPath(daemon.dataDir));
    const travel = new TimeTravel(store, {}, REPLAYERS);
    try {
      const machinesOf = (actors: readonly { machine: string }[]) => [...new Set(actors.map((a) => a.machine))].sort();
      const then = await travel.at(during);
      expect(then.seq).toBe(during);
      expect(machinesOf(then.actors)).toEqual(['heartbeat', 'kernel', 'memory', 'pluginSupervisor', 'scheduler', 'turn']);
      expect(then.actors.filter((a) => a.diverged)).toEqual([]);
      expect(then.actors.find((a) => a.machine === 'scheduler')?.state).toBe('busy');
      const turn = then.actors.find((a) => a.machine === 'turn');
      expect(JSON.stringify(turn?.state)).not.toMatch(/done|completed/i);
      const supervisors = then.actors.filter((a) => a.machine === 'pluginSupervisor').map((a) => a.actor);
      expect(
        supervisors.some((actor) => actor.startsWith('plugin-cli:')),
        supervisors.join(', '),
      ).toBe(true);
      expect(then.actors.filter((a) => a.machine === 'heartbeat').map((a) => a.actor)).toEqual([
        'heartbeat-rules',
        'heartbeat-distill',
        'heartbeat-archive',
        'heartbeat-merge',
        'heartbeat-review',
      ]);

      const end = await travel.at(Number.MAX_SAFE_INTEGER);
      expect(end.seq).toBe(end.head);
      expect(end.actors.filter((a) => a.diverged)).toEqual([]);
      expect(end.actors.find((a) => a.machine === 'scheduler')?.state).toBe('idle');
      expect(end.actors.find((a) => a.actor === turn?.actor)?.state).not.toEqual(turn?.state);

      const first = await travel.at(1);
      expect(machinesOf(first.actors)).toEqual(['kernel']);
    } finally {
      travel.close();
      await store.close();
    }
  });
});
