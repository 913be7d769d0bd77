/**
 * What a subprocess plugin writes to homed's output (its log lines and its stderr): each one line,
 * scrubbed, then with its controls shown and cut at STDERR_LINE_AT_MOST (cut before the scrub, all
 * of a value but its last characters could end it), and at most LINES_PER_WINDOW of them a window;
 * past that they are counted, and the count is said when the next window begins.
 */
import { type Clock, oneVisibleLine } from '../../events/index.ts';
import { STDERR_LINE_AT_MOST } from './stderrLines.ts';

export const LINES_PER_WINDOW = 100;
export const WINDOW_MS = 10_000;

/**
 * Says one line of `plugin`'s (`label` after its name: '' for its log, ' (stderr)'), within the
 * budget; `cutNote`, what follows a line cut short before it came here.
 */
export type PluginConsole = (label: string, text: string, cutNote?: string) => void;

export const pluginConsole = (
  plugin: string,
  log: (line: string) => void,
  clock: Clock,
  scrubLine: (line: string, cutShort: boolean) => string,
): PluginConsole => {
  let windowStart = Number.NEGATIVE_INFINITY;
  let said = 0;
  let notSaid = 0;
  return (label, text, cutNote) => {
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
    log(`plugin ${plugin}${label}: ${oneVisibleLine(scrubLine(text, cutNote !== undefined), STDERR_LINE_AT_MOST)}${cutNote ?? ''}`);
  };
};
