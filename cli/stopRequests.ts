/**
 * What asks the daemon to stop: SIGINT, SIGTERM, or, when npm started it, its parent going
 * away. All three resolve one promise, the daemon's one stop path; the first request counts,
 * later ones are noted once and never end the process mid-stop (npm forwards the Ctrl-C the
 * terminal already sent, so one Ctrl-C arrives twice).
 *
 * Why the parent: SIGTERM to `npx homed` ends npm and the shell npm ran the bin through, not
 * node, which would run on orphaned; an npm killed outright forwards nothing at all. So a
 * daemon started by npm checks, on the injected timers, that its parent is still the one it
 * started under. Started any other way (node, a service manager, `nohup homed &`), it does not.
 */
import type { Timers } from '../events/index.ts';

export type StopReason = 'SIGINT' | 'SIGTERM' | 'parent exited';

/** How often a daemon started by npm checks that its parent is still there. */
export const PARENT_CHECK_MS = 500;

/** npm sets npm_lifecycle_event for every script it runs (npm start, npm run, npx / npm exec). */
export const launchedByNpm = (env: NodeJS.ProcessEnv): boolean => env.npm_lifecycle_event !== undefined;

/** Where signals come from (the process; an emitter in tests). */
export type SignalSource = Readonly<{ on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown }>;

export type StopListening = Readonly<{
  timers: Timers;
  /** One line for the log when a request comes while the stop is under way. */
  note: (line: string) => void;
  watchParent?: boolean;
  /** The first signal will come twice (npm forwards the Ctrl-C the terminal sent its group): its echo is not noted. */
  echoed?: boolean;
  parentPid?: () => number;
  signals?: SignalSource;
}>;

export type StopRequests = Readonly<{ requested: Promise<StopReason>; close(): void }>;

/**
 * Starts listening. `close()` ends the parent check; the signal listeners stay until the
 * process exits, so a signal that comes late (after the stop, before the exit) cannot turn a
 * clean stop into a kill.
 */
export const listenForStop = ({
  timers,
  note,
  watchParent = launchedByNpm(process.env),
  echoed = launchedByNpm(process.env),
  parentPid = () => process.ppid,
  signals = process,
}: StopListening): StopRequests => {
  let first: StopReason | undefined;
  let noted = false;
  let echoExpected = echoed;
  let resolve!: (reason: StopReason) => void;
  const requested = new Promise<StopReason>((r) => (resolve = r));
  const request = (reason: StopReason) => {
    if (first === undefined) {
      first = reason;
      resolve(reason);
    } else if (echoExpected && reason === first) {
      echoExpected = false;
    } else if (!noted) {
      noted = true;
      note(`${reason} while stopping (${first}); the stop goes on (SIGKILL ends it at once, losing nothing acknowledged)`);
    }
  };
  signals.on('SIGINT', () => request('SIGINT'));
  signals.on('SIGTERM', () => request('SIGTERM'));
  const parent = parentPid();
  let check: unknown;
  const arm = () => {
    check = timers.setTimer(() => {
      check = undefined;
      if (first !== undefined) return; // already stopping: nothing more to watch for
      if (parentPid() === parent) arm();
      else request('parent exited');
    }, PARENT_CHECK_MS);
  };
  if (watchParent) arm();
  return {
    requested,
    close: () => {
      if (check !== undefined) timers.clearTimer(check);
      check = undefined;
    },
  };
};
