/**
 * What a subprocess plugin writes to homed's output (its log lines and its stderr): each one line
 * with its controls shown and cut at STDERR_LINE_AT_MOST, and at most LINES_PER_WINDOW of them a
 * window; past that they are counted, and the count is said when the next window begins.
 */
import { type Clock, oneVisibleLine } from '../../events/index.ts';
import { STDERR_LINE_AT_MOST } from './stderrLines.ts';

export const LINES_PER_WINDOW = 100;
export const WINDOW_MS = 10_000;

/** Says one line of `plugin`'s (`label` after its name: '' for its log, ' (stderr)'), within the budget. */
export type PluginConsole = (label: string, text: string) => void;

export const pluginConsole = (plugin: string, log: (line: string) => void, clock: Clock): PluginConsole => {
  let windowStart = Number.NEGATIVE_INFINITY;
  let said = 0;
  let notSaid = 0;
  return (label, text) => {
    const now = clock.now();
    if (now - windowStart >= WINDOW_MS) {
      if (notSaid > 0) {
        log(`plugin ${plugin}: ${notSaid} more lines not shown (it wrote more than ${LINES_PER_WINDOW} in ${WINDOW_MS / 1000} s)`);
      }
      windowStart = now;
      said = 0;
      notSaid = 0;
    }
    if (said >= LINES_PER_WINDOW) {
      notSaid++;
      return;
    }
    said++;
    log(`plugin ${plugin}${label}: ${oneVisibleLine(text, STDERR_LINE_AT_MOST)}`);
  };
};
