/**
 * When an in-process daemon has nothing left to do until the test acts: every turn that is
 * open waits on a model call the gated provider holds or a tool call the probe holds, every
 * running task has a turn that has not ended, every plugin is in a steady state with its
 * process alive, the output actor and the async projections have read the whole log, and
 * the log's head has stopped moving. Decided from what can be observed, polled; the short
 * pauses between polls only give the other side a chance to run.
 */
import type { InProcessDaemon } from './inProcessDaemon.ts';
import { PROBE_TOOL } from './probePlugin.ts';
import { roundAwaitingModel, turnRecords } from './turnRecords.ts';

const STEADY_PLUGIN_STATES = ['running', 'stopped', 'backoff', 'gaveUp'];

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0); // signal 0 only asks whether the process exists
    return true;
  } catch {
    return false;
  }
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const withDeadline = async <T>(promise: Promise<T>, deadline: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen in time`)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** What the daemon is still doing (empty when it waits on the test). */
export const stillBusy = async (daemon: InProcessDaemon): Promise<string[]> => {
  const busy: string[] = [];
  const { store } = daemon;
  const events = await store.readAll();
  const turns = turnRecords(events);
  const heldCalls = new Set(daemon.probe.held.map((h) => h.callId));
  let awaitingModel = 0;
  for (const turn of turns.filter((t) => !t.completed)) {
    if (roundAwaitingModel(turn)) {
      awaitingModel++;
      continue;
    }
    const open = [...turn.openToolCalls].filter(([callId, name]) => !(name === PROBE_TOOL && heldCalls.has(callId)));
    if (turn.cancelled || turn.output || open.length > 0 || turn.openToolCalls.size === 0) {
      busy.push(`${turn.stream} is between steps${open.length ? ` (tool calls ${open.map(([, name]) => name).join(', ')})` : ''}`);
    }
  }
  if (awaitingModel !== daemon.gate.held.length) {
    busy.push(`${awaitingModel} turn(s) wait on the model but the gated provider holds ${daemon.gate.held.length} call(s)`);
  }
  const { running } = daemon.facility('scheduler').state();
  if (running) {
    const turn = turns.findLast((t) => t.taskId === running.id);
    if (!turn || turn.completed) busy.push(`task ${running.id} runs without a live turn`);
  }
  for (const plugin of daemon.facility('plugins').list()) {
    if (!STEADY_PLUGIN_STATES.includes(plugin.state)) busy.push(`plugin ${plugin.name} is ${plugin.state}`);
    else if (plugin.state === 'running' && plugin.pid !== null && !isAlive(plugin.pid)) busy.push(`plugin ${plugin.name} died`);
  }
  return busy;
};

/**
 * Waits until the daemon is quiet (see above) for three polls in a row at the same head.
 * @throws when it is not quiet within `timeoutMs`, naming what it is still doing.
 */
export const settle = async (daemon: InProcessDaemon, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  let lastHead = -1;
  let busy: string[] = [];
  while (quiet < 3) {
    if (!daemon.isRunning) {
      await withDeadline(daemon.recovered(), deadline, 'recovering from the crash');
      quiet = 0;
      continue;
    }
    const { kernel } = daemon;
    try {
      const stopped = await Promise.race([kernel.done, pause(0).then(() => undefined)]);
      if (stopped) {
        const why = stopped.failure ? `module '${stopped.failure.module}' failed: ${stopped.failure.error}` : stopped.reason;
        throw new Error(`the kernel stopped by itself: ${why}`);
      }
      const head = await daemon.store.headSeq();
      await withDeadline(daemon.facility('output').caughtUp(head), deadline, `the output actor reaching seq ${head}`);
      await withDeadline(daemon.facility('projections').subscription.caughtUp(head), deadline, `the projections reaching seq ${head}`);
      busy = await stillBusy(daemon);
      quiet = busy.length === 0 && head === lastHead ? quiet + 1 : 0;
      lastHead = head;
    } catch (error) {
      if (daemon.isRunning && daemon.kernel === kernel) throw error; // else a crash while polling: wait for the next kernel
      continue;
    }
    if (Date.now() > deadline)
      throw new Error(`the daemon did not settle within ${timeoutMs} ms: ${busy.join('; ') || 'its log kept growing'}`);
    await pause(quiet === 0 ? 2 : 5);
  }
};
