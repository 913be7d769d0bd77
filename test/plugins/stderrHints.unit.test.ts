/** A plugin's stderr line a person can fix gets a one-line hint beside it; any other line gets none. */
import { describe, expect, it } from 'vitest';
import { stderrHint } from '../../plugins/host/stderrHints.ts';

describe('stderrHint', () => {
  it('tells how to install the SDK when the plugin cannot find it, and says nothing of other lines', () => {
    const line = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@hologram/plugin-sdk' imported from /data/plugins/weather/main.ts";
    expect(stderrHint('weather', '/data/plugins/weather', line)).toBe(
      "plugin weather: it cannot find @hologram/plugin-sdk: run 'npm run pack:sdk' in the Hologram checkout, " +
        "then 'npm install <checkout>/dist/plugin-sdk' in /data/plugins/weather, and 'homed plugins start weather'",
    );
    expect(stderrHint('weather', '/data/plugins/weather', "Cannot find package 'left-pad' imported from x")).toBeUndefined();
    expect(stderrHint('weather', '/data/plugins/weather', '    at file:///data/plugins/weather/main.ts:1:1')).toBeUndefined();
  });
});
