/** A plugin's stderr line a person can fix gets a one-line hint beside it; any other line gets none. */
import { describe, expect, it } from 'vitest';
import { stderrHint } from '../../plugins/host/stderrHints.ts';

describe('stderrHint', () => {
  it('tells how to install the SDK when the plugin cannot find it, and says nothing of other lines', () => {
    const line = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@hologram/plugin-sdk' imported from /data/plugins/weather/main.ts";
    expect(stderrHint('weather', '/data/plugins/weather', line)).toBe(
      "plugin weather: it cannot find @hologram/plugin-sdk: run 'npm run pack:sdk' in the Hologram checkout, " +
        "then 'npm install --ignore-scripts <checkout>/dist/plugin-sdk' in /data/plugins/weather, and 'homed plugins start weather'",
    );
    expect(stderrHint('weather', '/data/plugins/weather', "Cannot find package 'left-pad' imported from x")).toBeUndefined();
    expect(stderrHint('weather', '/data/plugins/weather', '    at file:///data/plugins/weather/main.ts:1:1')).toBeUndefined();
  });

  it('tells a plugin whose entry awaits at its top level, read as CommonJS, to say its folder holds a module', () => {
    const hint =
      'plugin weather: its entry awaits at its top level, which only a module may: put a package.json holding ' +
      '{"type": "module"} in /data/plugins/weather, then \'homed plugins start weather\'';
    for (const line of [
      '/data/plugins/weather/main.ts:3:0: ERROR: Top-level await is currently not supported with the "cjs" output format',
      'Error [ERR_REQUIRE_ASYNC_MODULE]: require() cannot be used on an ESM graph with top-level await.',
    ]) {
      expect(stderrHint('weather', '/data/plugins/weather', line)).toBe(hint);
    }
  });

  it('says, when a plugin writes where its sandbox lets it only read, where it may write', () => {
    const line = "Error: EROFS: read-only file system, open '/srv/plugins/notes.json'";
    expect(stderrHint('weather', '/data/plugins/weather', line, [], '/data/state/weather')).toBe(
      'plugin weather: its sandbox lets a plugin write only in its state folder (/data/state/weather, ' +
        '$HOLOGRAM_PLUGIN_STATE) and its TMPDIR; its own folder and every other folder are read-only to it: keep what it writes there',
    );
    // Without that sandbox, a read-only folder is none of its doing.
    expect(stderrHint('weather', '/data/plugins/weather', line, [])).toBeUndefined();
  });

  it('says when what a plugin cannot find is in a folder its sandbox hides, and how to give it the home', () => {
    const hidden = ['/home/ada', '/tmp'];
    const hint = (line: string) => stderrHint('weather', '/data/plugins/weather', line, hidden);
    expect(hint("/usr/bin/env: '/home/ada/.pyenv/shims/python3': No such file or directory")).toBe(
      'plugin weather: /home/ada/.pyenv/shims/python3 is in /home/ada, which its sandbox hides from plugins; a plugin that needs the home ' +
        "lists the 'home' capability in its manifest (plugin.json), then 'homed plugins start weather'",
    );
    expect(
      hint("Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/build/lib.js' imported from /data/plugins/weather/main.js"),
    ).toContain('/tmp/build/lib.js is in /tmp');
    // Not found, but not in a hidden folder; in one, but not a failure; and a sandbox hiding nothing.
    expect(hint("Error: ENOENT: no such file or directory, open '/data/plugins/weather/config.json'")).toBeUndefined();
    expect(hint('reading /home/ada/notes.txt')).toBeUndefined();
    expect(stderrHint('weather', '/data/plugins/weather', "ENOENT: no such file or directory, open '/home/ada/x'")).toBeUndefined();
    // What it quotes of the plugin's line cannot clear the screen or forge a line of homed's.
    const forged = hint('ENOENT /tmp/\u001b[2J\u001b]0;pwned\u0007\u001b[1Ahomed: ready');
    expect(forged).toMatch(/^plugin weather: \/tmp\/\S+ is in \/tmp, which its sandbox hides/);
    expect([...forged!].filter((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toEqual([]);
  });
});
