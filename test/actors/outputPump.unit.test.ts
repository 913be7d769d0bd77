import { describe, expect, it } from 'vitest';
import { OutputPump, type OutputDevice, type PumpReport } from '../../actors/output/outputPump.ts';

/** A device whose sends complete only when the test says so. */
const gatedDevice = () => {
  const sent: string[] = [];
  const gates: (() => void)[] = [];
  const device: OutputDevice = {
    send: (chunk) =>
      new Promise<void>((resolve) =>
        gates.push(() => {
          sent.push(chunk);
          resolve();
        }),
      ),
  };
  const openOne = async () => {
    gates.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  // Opens gates as sends arrive, until `done` settles (sends start asynchronously).
  const openUntil = async (done: Promise<unknown>) => {
    let settled = false;
    void done.then(() => (settled = true));
    while (!settled) await openOne();
  };
  return { device, sent, openOne, openUntil };
};

describe('OutputPump', () => {
  it('on a real-time channel, drops the oldest chunk when the queue is full, and reports it', async () => {
    const reports: PumpReport[] = [];
    const gated = gatedDevice();
    const pump = new OutputPump({
      channel: 'voice',
      resolveDevice: () => gated.device,
      report: (r) => reports.push(r),
      capacity: 3,
      realtime: true,
      droppable: (chunk) => chunk !== 'END',
    });
    pump.push('a');
    await new Promise((r) => setImmediate(r)); // 'a' is now being sent
    for (const chunk of ['b', 'c', 'd', 'e']) pump.push(chunk); // b..e compete for 3 places
    expect(pump.queued).toBe(3);
    const closing = pump.close();
    await gated.openUntil(closing);
    expect(gated.sent).toEqual(['a', 'c', 'd', 'e']);
    expect(reports).toEqual([{ type: 'dropped', channel: 'voice', chunk: 'b', reason: 'queue full' }]);
  });

  it('on a real-time channel, never drops what is not droppable (the end of a reply)', async () => {
    const reports: PumpReport[] = [];
    const gated = gatedDevice();
    const pump = new OutputPump({
      channel: 'voice',
      resolveDevice: () => gated.device,
      report: (r) => reports.push(r),
      capacity: 2,
      realtime: true,
      droppable: (chunk) => chunk !== 'END',
    });
    pump.push('a');
    await new Promise((r) => setImmediate(r));
    for (const chunk of ['END', 'b', 'c']) pump.push(chunk);
    const closing = pump.close();
    await gated.openUntil(closing);
    expect(gated.sent).toEqual(['a', 'END', 'c']);
  });

  it('on any other channel, joins chunks when the queue is full, so nothing is lost', async () => {
    const reports: PumpReport[] = [];
    const gated = gatedDevice();
    const pump = new OutputPump({
      channel: 'cli',
      resolveDevice: () => gated.device,
      report: (r) => reports.push(r),
      capacity: 2,
      coalesce: (last, next) => (last === 'END' || next === 'END' ? undefined : last + next),
    });
    pump.push('a');
    await new Promise((r) => setImmediate(r)); // 'a' is now being sent
    for (const chunk of ['b', 'c', 'd', 'e', 'END']) pump.push(chunk);
    expect(pump.queued).toBe(3);
    const closing = pump.close();
    await gated.openUntil(closing);
    expect(gated.sent.join('')).toBe('abcdeEND');
    expect(gated.sent).toEqual(['a', 'b', 'cde', 'END']);
    expect(reports).toEqual([]);
  });

  it('resolves the device afresh for every chunk, and reports chunks with no device', async () => {
    const reports: PumpReport[] = [];
    const received: string[] = [];
    let device: OutputDevice | undefined = { send: (c) => void received.push(`first:${c}`) };
    const pump = new OutputPump({ channel: 'qq', resolveDevice: () => device, report: (r) => reports.push(r) });
    pump.push('1');
    await new Promise((r) => setImmediate(r));
    device = undefined;
    pump.push('2');
    await new Promise((r) => setImmediate(r));
    device = { send: (c) => void received.push(`second:${c}`) };
    pump.push('3');
    await pump.close();
    expect(received).toEqual(['first:1', 'second:3']);
    expect(reports).toEqual([{ type: 'no-device', channel: 'qq', chunk: '2' }]);
  });

  it('close drains every queued chunk before resolving, and refuses new ones', async () => {
    const gated = gatedDevice();
    const pump = new OutputPump({ channel: 'cli', resolveDevice: () => gated.device, report: () => undefined });
    pump.push('x');
    pump.push('y');
    let closed = false;
    const closing = pump.close().then(() => (closed = true));
    await gated.openOne();
    expect(closed).toBe(false);
    await gated.openUntil(closing);
    expect(gated.sent).toEqual(['x', 'y']);
    expect(() => pump.push('z')).toThrow(/closed/);
  });

  it('reports a device that fails and keeps going', async () => {
    const reports: PumpReport[] = [];
    const pump = new OutputPump({
      channel: 'cli',
      resolveDevice: () => ({
        send: (c) => {
          if (c === 'bad') throw new Error('socket gone');
        },
      }),
      report: (r) => reports.push(r),
    });
    pump.push('bad');
    pump.push('good');
    await pump.close();
    expect(reports).toEqual([{ type: 'send-failed', channel: 'cli', chunk: 'bad', error: 'socket gone' }]);
  });
});
