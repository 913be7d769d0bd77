/**
 * Descriptors homed was started with beyond stdio that stay open across exec: every plugin it
 * spawns would inherit them, sandbox or not (a red team started homed with a file of a hidden
 * home open as descriptor 40, and every plugin read it). Node opens its own close-on-exec.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

const CLOSE_ON_EXEC = 0o2000000;

/** Closes this process's descriptors above 2 that are not close-on-exec (its IPC channel to a parent kept), and says which. */
export const closeInheritedDescriptors = (): number[] => {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return []; // no /proc: nothing to look at
  }
  const channel = Number(process.env.NODE_CHANNEL_FD ?? -1);
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2) || fd === channel) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // the listing's own descriptor, closed once listed
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
    if (flags === undefined || (Number.parseInt(flags, 8) & CLOSE_ON_EXEC) !== 0) continue;
    closeSync(fd);
    closed.push(fd);
  }
  return closed.sort((a, b) => a - b);
};
