/**
 * Where a path really leads: symbolic links resolved as far as the path exists, the rest kept
 * as written (a file a tool is about to create). The sandbox judges paths as written; the proxy
 * judges them again as resolved here, so a link inside an allowed root cannot reach past it.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { DaemonPaths } from '../../machines/security/index.ts';

export const realPathOf = (path: string): string => {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync.native(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return path;
      rest.push(basename(at));
    }
  }
};

/** The daemon's paths as they resolve through links, for judging resolved paths. */
export const realDaemonPaths = ({ protectedPaths, dataDir, openInside }: DaemonPaths): DaemonPaths => ({
  protectedPaths: protectedPaths.map(realPathOf),
  ...(dataDir === undefined ? {} : { dataDir: realPathOf(dataDir) }),
  ...(openInside === undefined ? {} : { openInside: openInside.map(realPathOf) }),
});
