/** A subprocess plugin's lines on homed's output: one line each, scrubbed before they are cut, controls shown, and a bounded number a window. */
import { describe, expect, it } from 'vitest';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { SecretAliases } from '../../actors/security/secretAliases.ts';
import { VirtualClock } from '../../events/index.ts';
import { LINES_PER_WINDOW, pluginConsole, WINDOW_MS } from '../../plugins/host/pluginConsole.ts';
import { STDERR_LINE_AT_MOST, stderrCutNote } from '../../plugins/host/stderrLines.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();
const asWritten = (line: string): string => line;

describe('pluginConsole', () => {
  // 2,000 lines of a plugin were all printed (found by the hostile tester).
  it('says at most LINES_PER_WINDOW lines a window, then how many it left out when the next begins', () => {
    const clock = new VirtualClock(1_000);
    const lines: string[] = [];
    const say = pluginConsole('chatty', (line) => lines.push(line), clock, asWritten);
    for (let i = 0; i < LINES_PER_WINDOW + 50; i++) say(i % 2 ? ' (stderr)' : '', `line ${i}`);
    expect(lines).toHaveLength(LINES_PER_WINDOW);
    expect(lines.slice(0, 2)).toEqual(['plugin chatty: line 0', 'plugin chatty (stderr): line 1']);
    clock.advance(WINDOW_MS);
    say('', 'after\x1b[2J');
    expect(lines.slice(LINES_PER_WINDOW)).toEqual([
      `plugin chatty: 50 more lines not shown (it wrote more than ${LINES_PER_WINDOW} in ${WINDOW_MS / 1000} s)`,
      'plugin chatty: after␛[2J',
    ]);
  });

  // A hostile tester's plugin logged 8,182 characters and a value it was filled: cut before the scrub, the line
  // kept all of the value but its last characters. One of stderr, cut at the bound before it comes here, too.
  it('scrubs a line before cutting it, and leaves out the end of one cut short that could begin a value', () => {
    const dir = tempDir();
    const value = 'sk-console-5f0e8d7c6b5a';
    SecretVault.open(dir).set('KEY', value);
    const aliases = new SecretAliases(dir);
    const lines: string[] = [];
    const say = pluginConsole(
      'leaker',
      (line) => lines.push(line),
      new VirtualClock(0),
      (line, cutShort) => (cutShort ? aliases.scrubCut(line) : aliases.scrub(line)),
    );
    for (const kept of [2, 10, value.length - 1]) say('', `${'L'.repeat(STDERR_LINE_AT_MOST - kept)}${value}`);
    for (const kept of [2, 10, value.length - 1]) say(' (stderr)', `${'E'.repeat(100)}${value.slice(0, kept)}`, stderrCutNote());
    for (const line of lines) expect(line).not.toContain(value.slice(0, 2));
    expect(lines[0]).toMatch(/^plugin leaker: L+@\{… \(\d+ more characters\)$/);
    expect(lines[3]).toBe(`plugin leaker (stderr): ${'E'.repeat(100)}${stderrCutNote()}`);
  });
});
