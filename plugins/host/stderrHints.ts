/**
 * What a plugin's stderr says that a person can fix, said in one line beside it: a plugin that
 * cannot find the SDK it imports (the README's example, before the SDK is installed in its
 * folder), one that cannot find what is in a folder its sandbox hides (an interpreter or a
 * package installed in the home), and one that writes where its sandbox lets it only read.
 */
import { isUnder } from '../../actors/index.ts';
import { visibleControls } from '../../events/index.ts';
import { PLUGIN_STATE_ENV } from './pluginEnv.ts';

const MISSING_SDK = /Cannot find (?:package|module) '@hologram\/plugin-sdk'/;

/** A line saying an entry awaits at its top level but is read as CommonJS (its folder has no package.json saying "module"). */
const NOT_A_MODULE = /Top-level await is currently not supported with the "cjs" output format|ERR_REQUIRE_ASYNC_MODULE/;

/** A line saying something was not found. */
const NOT_FOUND = /No such file or directory|ENOENT|not found|Cannot find (?:package|module)/i;
/** A line saying a write met a read-only folder. */
const READ_ONLY = /EROFS|Read-only file system/;
/** An absolute path in a line, up to a space, a quote, a colon or a bracket. */
const ABSOLUTE_PATH = /(?:^|[\s'"(`=])(\/[^\s'"`:()]+)/g;

/**
 * The hint a line of plugin `name`'s stderr calls for, if any; `dir` is the plugin's folder,
 * `hidden` the private folders its sandbox hides (a program or a file of its in the home is not there),
 * `readOnly` whether it makes every other folder but the plugin's own read-only.
 */
export const stderrHint = (
  name: string,
  dir: string,
  line: string,
  hidden: readonly string[] = [],
  /** Where the plugin may write, when its sandbox makes every other folder read-only to it. */
  state?: string,
): string | undefined => {
  if (MISSING_SDK.test(line)) {
    return (
      `plugin ${name}: it cannot find @hologram/plugin-sdk: run 'npm run pack:sdk' in the Hologram checkout, ` +
      `then 'npm install --ignore-scripts <checkout>/dist/plugin-sdk' in ${dir}, and 'homed plugins start ${name}'`
    );
  }
  if (NOT_A_MODULE.test(line)) {
    return (
      `plugin ${name}: its entry awaits at its top level, which only a module may: put a package.json holding ` +
      `{"type": "module"} in ${dir}, then 'homed plugins start ${name}'`
    );
  }
  if (state !== undefined && READ_ONLY.test(line)) {
    return (
      `plugin ${name}: its sandbox lets a plugin write only in its state folder (${state}, ` +
      `$${PLUGIN_STATE_ENV}) and its TMPDIR; its own folder and every other folder are read-only to it: keep what it writes there`
    );
  }
  if (hidden.length === 0 || !NOT_FOUND.test(line)) return undefined;
  for (const [, path] of line.matchAll(ABSOLUTE_PATH)) {
    const tree = hidden.find((folder) => isUnder(path!, folder));
    if (tree === undefined) continue;
    // The path is the plugin's words: its controls shown as symbols, as its stderr line's are.
    return visibleControls(
      `plugin ${name}: ${path} is in ${tree}, which its sandbox hides from plugins; a plugin that needs the home ` +
        `lists the 'home' capability in its manifest (plugin.json), then 'homed plugins start ${name}'`,
    );
  }
  return undefined;
};
