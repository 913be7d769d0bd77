/** The daemon's stop requests: the first of SIGINT, SIGTERM and (under npm) a parent gone counts; later ones are noted once. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { launchedByNpm, listenForStop, PARENT_CHECK_MS, type StopReason } from '../../cli/stopRequests.ts';
import { createManualTimers } from '../support/manualTimers.ts';

const given = ({ watchParent = false, echoed = false } = {}) => {
  const timers = createManualTimers();
  const signals = new EventEmitter();
  const notes: string[] = [];
  let parent = 100;
  let reason: StopReason | undefined;
  const stops = listenForStop({ timers, note: (line) => notes.push(line), watchParent, echoed, parentPid: () => parent, signals });
  void stops.requested.then((r) => (reason = r));
  const settled = () => new Promise((resolve) => setImmediate(resolve)).then(() => reason);
  return { timers, signals, notes, stops, settled, reparent: (pid: number) => (parent = pid) };
};

describe('listenForStop', () => {
  it('resolves with the first signal and notes a later one once, without a second request', async () => {
    const { signals, notes, settled } = given();
    signals.emit('SIGINT');
    signals.emit('SIGTERM');
    signals.emit('SIGINT');
    expect(await settled()).toBe('SIGINT');
    expect(notes).toEqual([expect.stringContaining('SIGTERM while stopping (SIGINT); the stop goes on')]);
  });

  // Under npm one Ctrl-C arrives twice (npm forwards what the terminal sent): the user was told
  // they had pressed twice. The echo of the first signal now passes unremarked; a third does not.
  it('under npm, lets the echo of the first signal pass unremarked, and notes the next', async () => {
    const { signals, notes, settled } = given({ echoed: true });
    signals.emit('SIGINT');
    signals.emit('SIGINT');
    expect(await settled()).toBe('SIGINT');
    expect(notes).toEqual([]);
    signals.emit('SIGINT');
    expect(notes).toEqual([expect.stringContaining('SIGINT while stopping (SIGINT); the stop goes on')]);
  });

  it('under npm, asks to stop once the parent it started under is gone, not before', async () => {
    const { timers, settled, reparent } = given({ watchParent: true });
    timers.advance(PARENT_CHECK_MS * 10);
    expect(await settled()).toBeUndefined();
    reparent(1); // orphaned: adopted by init
    timers.advance(PARENT_CHECK_MS);
    expect(await settled()).toBe('parent exited');
    expect(timers.armed).toBe(0);
  });

  it('stops checking once a signal asked first, and when closed', async () => {
    const signalled = given({ watchParent: true });
    signalled.signals.emit('SIGTERM');
    signalled.reparent(1);
    signalled.timers.advance(PARENT_CHECK_MS);
    expect(await signalled.settled()).toBe('SIGTERM');
    expect(signalled.notes).toEqual([]);
    expect(signalled.timers.armed).toBe(0);

    const closed = given({ watchParent: true });
    expect(closed.timers.armed).toBe(1);
    closed.stops.close();
    expect(closed.timers.armed).toBe(0);
  });

  it('watches no parent unless started by npm', () => {
    expect(given().timers.armed).toBe(0);
    expect(launchedByNpm({ npm_lifecycle_event: 'start' })).toBe(true);
    expect(launchedByNpm({ npm_lifecycle_event: 'npx' })).toBe(true);
    expect(launchedByNpm({})).toBe(false);
  });
});
