/**
 * A terminal a test can type into and read, as a person at it would: a tmux session on a private
 * server (its own socket, so a test never touches the user's tmux), a fixed size, keys sent one
 * string at a time, and the screen read back as text.
 */
import { execFileSync } from 'node:child_process';
import { afterEach } from 'vitest';

export type Terminal = Readonly<{
  /** Types `text` (literally) and, unless `enter` is false, presses Enter. */
  type(text: string, options?: { enter?: boolean }): void;
  /** Presses a key by tmux name: 'C-c', 'C-d', 'Enter'. */
  press(key: string): void;
  /** What the screen and its scrollback show now. */
  screen(): string;
  /** Resolves with the screen once `pattern` is on it; fails after `timeoutMs` showing the screen. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}>;

let servers = 0;

/** Opens terminals for a test and closes them after it. */
export const useTerminals = () => {
  const opened: string[] = [];
  afterEach(() => {
    for (const server of opened.splice(0)) {
      try {
        execFileSync('tmux', ['-L', server, 'kill-server'], { stdio: 'ignore' });
      } catch {
        // already gone with its last window
      }
    }
  });
  return {
    /** Runs `argv` in a new 120×40 terminal, with `env` added to this process's environment. */
    open(argv: readonly string[], env: Readonly<Record<string, string>> = {}): Terminal {
      const server = `hologram-test-${process.pid}-${++servers}`;
      opened.push(server);
      const tmux = (...args: string[]) => execFileSync('tmux', ['-L', server, ...args], { encoding: 'utf8' });
      const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
      // remain-on-exit keeps the last screen readable after the program ends.
      tmux(
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        'main',
        '-x',
        '120',
        '-y',
        '40',
        ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        command,
      );
      tmux('set-option', '-t', 'main', 'remain-on-exit', 'on');
      const screen = () => tmux('capture-pane', '-p', '-J', '-t', 'main', '-S', '-500');
      return {
        type(text, { enter = true } = {}) {
          tmux('send-keys', '-t', 'main', '-l', text);
          if (enter) tmux('send-keys', '-t', 'main', 'Enter');
        },
        press(key) {
          tmux('send-keys', '-t', 'main', key);
        },
        screen,
        async waitFor(pattern, timeoutMs = 20_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const now = screen();
            if (pattern.test(now)) return now;
            if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern} within ${timeoutMs} ms; it shows:\n${now}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        },
      };
    },
  };
};
