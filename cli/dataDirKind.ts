/**
 * Whether a data dir given on the command line is a folder: in a module of its own, so that
 * waiter (which must start without the daemon's packages) says so too.
 */
import { statSync } from 'node:fs';
import { EventLogUnavailable } from '../events/errors.ts';

/** Refuses a --data that names something other than a folder (a file, a FIFO), which no message about creating it would explain. */
export const refuseNonDirectory = (path: string): void => {
  let kind: string | undefined;
  try {
    const found = statSync(path);
    if (!found.isDirectory()) kind = found.isFile() ? 'a file' : 'not a folder';
  } catch {
    return; // nothing there (or unreadable): said where it is created or read
  }
  if (kind) throw new EventLogUnavailable(`the data dir ${path} is ${kind}; give --data a folder, or move that away`);
};
