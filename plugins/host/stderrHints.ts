/**
 * What a plugin's stderr says that a person can fix, said in one line beside it: today, a
 * plugin that cannot find the SDK it imports (the README's example, before the SDK is installed
 * in its folder).
 */
const MISSING_SDK = /Cannot find (?:package|module) '@hologram\/plugin-sdk'/;

/** The hint a line of plugin `name`'s stderr calls for, if any; `dir` is the plugin's folder. */
export const stderrHint = (name: string, dir: string, line: string): string | undefined =>
  MISSING_SDK.test(line)
    ? `plugin ${name}: it cannot find @hologram/plugin-sdk: run 'npm run pack:sdk' in the Hologram checkout, ` +
      `then 'npm install <checkout>/dist/plugin-sdk' in ${dir}, and 'homed plugins start ${name}'`
    : undefined;
