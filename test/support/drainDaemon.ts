/**
 * Ends a run so its outcomes can be counted: answers every model call with plain text and
 * every held tool call, and lets virtual time pass for what waits on it (a preemption
 * cooldown, a plugin's backoff), until nothing runs, waits or is held.
 */
import { settle } from './daemonQuiescence.ts';
import type { InProcessDaemon } from './inProcessDaemon.ts';

export const drainDaemon = async (daemon: InProcessDaemon, maxSteps = 80): Promise<void> => {
  for (let step = 0; step < maxSteps; step++) {
    await settle(daemon);
    const [call] = daemon.gate.held;
    const [tool] = daemon.probe.held;
    if (call) {
      daemon.gate.piece(call.id, 'done');
      daemon.gate.finish(call.id);
    } else if (tool) tool.answer('done');
    else {
      const { running, stack, pending, queue, inbox } = daemon.facility('scheduler').state();
      if (!running && stack.length + pending.length + queue.length + inbox.length === 0) return;
      daemon.time.advance(2_100);
    }
  }
  const state = daemon.facility('scheduler').state();
  throw new Error(
    `the daemon did not drain in ${maxSteps} steps: running ${state.running?.id ?? 'nothing'}, ` +
      `stack [${state.stack.map((t) => t.id)}], pending [${state.pending.map((t) => t.id)}], queue [${state.queue.map((t) => t.id)}]`,
  );
};
