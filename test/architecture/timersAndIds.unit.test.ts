/**
 * One timers/ids facility: outside actors/clock/ the running system arms no timer and makes no
 * id of its own; it takes `Facility.timers` and `Facility.ids`, so tests and replay control
 * both. The plugin protocol and SDK ship standalone (a plugin process has no kernel to ask),
 * the web UI's page runs in a browser, and adapters/ is the outside world, so they are not held to it.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkNoRawTimers, readSource, sourceFiles } from './sourceRules.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const HELD = ['actors', 'machines', 'projections', 'events', 'plugins', 'cli'];
const NOT_HELD = ['actors/clock/', 'plugins/protocol/', 'plugins/sdk/', 'plugins/builtin/webui/app/'];

/**
 * Files another change owns that still break the rule, each with what is left to do. An entry
 * fails the test once its file is clean, so it is removed rather than forgotten.
 */
const PENDING: Readonly<Record<string, string>> = {};

const held = HELD.flatMap((folder) => sourceFiles(ROOT, folder)).filter((file) => !NOT_HELD.some((prefix) => file.startsWith(prefix)));

describe('timers and ids come from actors/clock/, through the facilities', () => {
  it('no file of the running system arms a raw timer or makes a raw id', () => {
    expect(held.length).toBeGreaterThan(100);
    const findings = held
      .filter((file) => !(file in PENDING))
      .flatMap((file) => checkNoRawTimers(readSource(ROOT, file)).map((finding) => `${file} ${finding}`));
    expect(findings).toEqual([]);
  });

  it('each pending exception still needs to be one', () => {
    const clean = Object.keys(PENDING).filter((file) => !held.includes(file) || checkNoRawTimers(readSource(ROOT, file)).length === 0);
    expect(clean, 'these files no longer break the rule: remove them from PENDING').toEqual([]);
  });

  it('actors/clock/ itself is where the real ones live', () => {
    expect(checkNoRawTimers(readSource(ROOT, 'actors/clock/systemClock.ts')).length).toBeGreaterThan(0);
  });

  it('the rule itself catches each kind of violation', () => {
    expect(checkNoRawTimers('const t = setTimeout(tick, 10);')).toEqual([
      'line 1: arms a raw timer (setTimeout); take Facility.timers (or actors/clock) instead',
    ]);
    expect(checkNoRawTimers('\n\nsetInterval(() => undefined, 1 << 30);')).toEqual([
      'line 3: arms a raw timer (setInterval); take Facility.timers (or actors/clock) instead',
    ]);
    expect(checkNoRawTimers('setImmediate(fn);')).toHaveLength(1);
    expect(checkNoRawTimers('const id = randomUUID();')).toEqual([
      'line 1: makes a raw id (randomUUID); take Facility.ids (or actors/clock) instead',
    ]);
    expect(checkNoRawTimers('const id = crypto.randomUUID();')).toHaveLength(1);
    expect(checkNoRawTimers("import { randomUUID as uuid } from 'node:crypto';")).toHaveLength(1);
    expect(checkNoRawTimers('globalThis.setTimeout(fire, 5);')).toHaveLength(1);
    expect(checkNoRawTimers('const arm = setTimeout;')).toHaveLength(1);
    expect(checkNoRawTimers("import { setTimeout as sleep } from 'node:timers/promises';")).toContain(
      "imports the timer module 'node:timers/promises'",
    );
    // Not violations: comments, the injected facility, a clock's property or method of that name.
    expect(checkNoRawTimers('// a raw setTimeout( would be wrong here\nconst t = timers.setTimer(fire, 5);')).toEqual([]);
    expect(checkNoRawTimers('/* setInterval(tick) */ const clock = { setTimeout: () => 0, clearTimeout: () => undefined };')).toEqual([]);
    expect(checkNoRawTimers('type Clock = { setTimeout?: (fn: () => void, ms: number) => number };')).toEqual([]);
    expect(checkNoRawTimers('simulatedClock.setTimeout(fire, 10);')).toEqual([]);
  });
});
