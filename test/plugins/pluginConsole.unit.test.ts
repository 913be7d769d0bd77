/** A subprocess plugin's lines on homed's output: one line each, controls shown, and a bounded number a window. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../events/index.ts';
import { LINES_PER_WINDOW, pluginConsole, WINDOW_MS } from '../../plugins/host/pluginConsole.ts';

describe('pluginConsole', () => {
  // 2,000 lines of a plugin were all printed (found by the hostile tester).
  it('says at most LINES_PER_WINDOW lines a window, then how many it left out when the next begins', () => {
    const clock = new VirtualClock(1_000);
    const lines: string[] = [];
    const say = pluginConsole('chatty', (line) => lines.push(line), clock);
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
});
