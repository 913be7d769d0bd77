/**
 * A command's output: written in order, waited for when the reader is slow, flushed before the
 * command ends, and a failed write (the reader gone, a full disk) stops the command with a
 * typed error instead of an uncaught one.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CommandOutput, OutputClosed, OutputFailed } from '../../cli/commandOutput.ts';

/** A stream whose writes complete only when the test says so, like a pipe nobody reads yet. */
const slowReader = (highWaterMark = 16) => {
  const taken: string[] = [];
  const pending: ((error?: Error | null) => void)[] = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      taken.push(chunk.toString());
      pending.push(done);
    },
  });
  return {
    stream,
    taken,
    /** The reader takes everything written so far. */
    read: () => {
      for (let done = pending.shift(); done; done = pending.shift()) done();
    },
    /** The reader goes away: the write in progress fails as a closed pipe does. */
    leave: (code = 'EPIPE') => pending.shift()?.(Object.assign(new Error(`write ${code}`), { code })),
  };
};

const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('CommandOutput', () => {
  it('writes lines in order', () => {
    const reader = slowReader(1024);
    const output = new CommandOutput(reader.stream);
    output.line('one');
    output.write('two');
    output.line('');
    reader.read();
    expect(reader.taken.join('')).toBe('one\ntwo\n');
  });

  it('drained() waits while the reader is behind, and resolves once it caught up', async () => {
    const reader = slowReader();
    const output = new CommandOutput(reader.stream);
    output.line('more than sixteen bytes of output');
    const drained = output.drained();
    expect(await settled(drained)).toBe('pending');
    reader.read();
    expect(await settled(drained)).toBe('resolved');
  });

  it('flush() resolves only once everything written has been taken', async () => {
    const reader = slowReader(1024);
    const output = new CommandOutput(reader.stream);
    output.line('a');
    output.line('b');
    const flushed = output.flush();
    expect(await settled(flushed)).toBe('pending');
    reader.read();
    reader.read();
    expect(await settled(flushed)).toBe('resolved');
    expect(reader.taken.join('')).toBe('a\nb\n');
  });

  it('a reader gone away (EPIPE) fails what waits with OutputClosed, and every later write throws it', async () => {
    const reader = slowReader();
    const output = new CommandOutput(reader.stream);
    output.line('more than sixteen bytes of output');
    const drained = output.drained();
    const failed = output.failed();
    reader.leave('EPIPE');
    await expect(drained).rejects.toBeInstanceOf(OutputClosed);
    await expect(failed).rejects.toBeInstanceOf(OutputClosed);
    expect(output.error).toBeInstanceOf(OutputClosed);
    expect(() => output.line('again')).toThrow(OutputClosed);
    await expect(output.flush()).rejects.toBeInstanceOf(OutputClosed);
  });

  it('another write error is OutputFailed, saying what failed and what to do', async () => {
    const reader = slowReader();
    const output = new CommandOutput(reader.stream);
    output.line('more than sixteen bytes of output');
    const flushed = output.flush();
    reader.leave('ENOSPC');
    await expect(flushed).rejects.toBeInstanceOf(OutputFailed);
    await expect(flushed).rejects.toThrow('cannot write the output (ENOSPC: write ENOSPC); free the disk or choose another destination');
    // Node's own message starts with the code: it is said once.
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(new OutputFailed(full).message).toBe(
      'cannot write the output (ENOSPC: no space left on device, write); free the disk or choose another destination',
    );
  });
});
