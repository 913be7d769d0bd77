/**
 * The machine's processes as Linux's /proc shows them: who is in which process group, when
 * each started (clock ticks since boot, which never repeat within a boot), its environment, and
 * the processes below one.
 * Reads only; on a system without /proc every answer is "unknown" (null).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

export type ProcessInfo = Readonly<{ pid: number; pgid: number; startTicks: number }>;

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** This boot's id, or null where /proc does not say. */
export const currentBootId = (): string | null => read('/proc/sys/kernel/random/boot_id')?.trim() || null;

/**
 * pgid and start of one live process from its /proc/PID/stat (the name in parentheses may hold
 * spaces and parentheses); null for one that is gone or a zombie.
 */
export const processInfo = (pid: number): ProcessInfo | null => {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state(3) ppid(4) pgrp(5) … starttime(22); fields[0] is field 3.
  // A zombie (exited, not yet reaped by whoever inherited it) runs nothing and has no environment to check.
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  const pgid = Number(fields[2]);
  const startTicks = Number(fields[19]);
  return Number.isInteger(pgid) && Number.isInteger(startTicks) ? { pid, pgid, startTicks } : null;
};

/** Every process /proc lists now; null where there is no /proc. */
export const listProcesses = (): ProcessInfo[] | null => {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  return entries.flatMap((entry) => (/^\d+$/.test(entry) ? [processInfo(Number(entry))].filter((p) => p !== null) : []));
};

/** The process's environment as NAME=VALUE entries; null when it is gone or not ours to read. */
export const environOf = (pid: number): string[] | null => read(`/proc/${pid}/environ`)?.split('\0') ?? null;

/** `pid` and every process below it, through /proc's lists of each thread's children (`pid` alone where /proc has none). */
export const processTree = async (pid: number): Promise<number[]> => {
  const tree: number[] = [];
  const seen = new Set<number>();
  for (const queue = [pid]; queue.length > 0; ) {
    const next = queue.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    tree.push(next);
    let tasks: string[];
    try {
      tasks = await readdir(`/proc/${next}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const children = await readFile(`/proc/${next}/task/${task}/children`, 'utf8').catch(() => '');
      for (const child of children.split(' ')) if (/^\d+$/.test(child)) queue.push(Number(child));
    }
  }
  return tree;
};
