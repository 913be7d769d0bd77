/**
 * At start, kills what a previous daemon's plugins left running: the processes of every
 * process group the log still holds open (that daemon was killed before it could stop them).
 * Only processes proven ours are killed: same boot, in that group, started no earlier than its
 * leader, and carrying that start's instance marker in their environment; anything else that
 * reuses the numbers is spared.
 */
import type { OpenGroup } from '../../actors/index.ts';
import { PLUGIN_INSTANCE_ENV } from './pluginEnv.ts';
import { currentBootId, environOf, listProcesses, type ProcessInfo } from './processTable.ts';

export type ProcessSource = Readonly<{
  bootId(): string | null;
  list(): readonly ProcessInfo[] | null;
  environ(pid: number): readonly string[] | null;
  kill(pid: number): void;
}>;

export const systemProcesses: ProcessSource = {
  bootId: currentBootId,
  list: listProcesses,
  environ: environOf,
  kill: (pid) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  },
};

export type Reaping = Readonly<{ group: OpenGroup; killed: readonly number[]; spared: number; reason: string }>;

/** The members of `group` that are provably its processes, and how many others sit in a group of that number. */
export const survivorsOf = (
  group: OpenGroup,
  processes: readonly ProcessInfo[],
  environ: (pid: number) => readonly string[] | null,
): { ours: number[]; spared: number } => {
  const marker = `${PLUGIN_INSTANCE_ENV}=${group.instance}`;
  const members = processes.filter((p) => p.pgid === group.pid && p.pid !== process.pid);
  const ours = members
    .filter((p) => group.startTicks === null || p.startTicks >= group.startTicks)
    .filter((p) => environ(p.pid)?.includes(marker) === true)
    .map((p) => p.pid);
  return { ours, spared: members.length - ours.length };
};

/** Kills the survivors of each open group; returns what was done to each, for the log. */
export const reapProcessGroups = (groups: readonly OpenGroup[], source: ProcessSource = systemProcesses): Reaping[] => {
  if (groups.length === 0) return [];
  const boot = source.bootId();
  const processes = source.list();
  return groups.map((group): Reaping => {
    if (processes === null) {
      return { group, killed: [], spared: 0, reason: 'this system has no /proc, so its processes cannot be checked; none were killed' };
    }
    if (group.bootId !== null && boot !== null && group.bootId !== boot) {
      return { group, killed: [], spared: 0, reason: 'the machine has restarted since: nothing of that group can be alive' };
    }
    const { ours, spared } = survivorsOf(group, processes, source.environ);
    for (const pid of ours) source.kill(pid);
    return {
      group,
      killed: ours,
      spared,
      reason: ours.length
        ? 'a previous daemon was killed before it could stop this plugin; what it left running was killed'
        : 'nothing of it was left running',
    };
  });
};
