import { describe, expect, it } from 'vitest';
import {
  ConnectionClosed,
  encodeFrame,
  frameBody,
  HandshakeTimedOut,
  MAX_SERVING,
  MAX_UNREAD_BYTES,
  PluginRequestFailed,
  ProtocolVersionMismatch,
  RequestTimedOut,
  decodeBody,
  type ByeMessage,
} from '../../plugins/protocol/index.ts';
import { createManualTimers } from '../support/manualTimers.ts';
import { connectedPair, flush, rawPeer } from './pair.ts';

describe('PluginConnection over a PassThrough pair', () => {
  it('handshakes: hello, welcome with the kernel capabilities', async () => {
    const { kernel, plugin } = connectedPair();
    const welcome = plugin.sayHello({ plugin: 'echo', version: '0.1.0' });
    const hello = await kernel.awaitHello({ capabilities: ['tools', 'notify'] });
    expect(hello).toEqual({ type: 'hello', protocol: 1, plugin: 'echo', version: '0.1.0' });
    expect(await welcome).toEqual({ type: 'welcome', protocol: 1, capabilities: ['tools', 'notify'] });
  });

  it('keeps a hello that arrived before anyone waited for it', async () => {
    const { kernel, plugin } = connectedPair();
    void plugin.sayHello({ plugin: 'early', version: '1' });
    await flush();
    expect((await kernel.awaitHello()).plugin).toBe('early');
  });

  it('refuses another protocol version: names both, says bye, closes', async () => {
    const { connection: kernel, inbound: toKernel, outbound: toPlugin } = rawPeer();
    const said: ByeMessage[] = [];
    toPlugin.on('data', (chunk: Buffer) => said.push(decodeFirst(chunk) as ByeMessage));
    toKernel.write(encodeFrame({ type: 'hello', protocol: 2, plugin: 'future', version: '9.0.0' }));
    const error = await kernel.awaitHello().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolVersionMismatch);
    expect(error).toMatchObject({ code: 'PROTOCOL_VERSION_MISMATCH', ours: 1, theirs: 2 });
    expect((error as Error).message).toMatch(/protocol 2.*protocol 1/);
    expect(kernel.closed).toBe(true);
    await flush();
    expect(said[0]).toMatchObject({ type: 'bye' });
    expect(said[0]!.reason).toMatch(/protocol 2/);
  });

  it('the plugin side learns of the refusal as a closed connection with the reason', async () => {
    const { connection: plugin, inbound: toPlugin } = rawPeer();
    toPlugin.write(encodeFrame({ type: 'bye', reason: 'protocol 1 only' }));
    const error = await plugin.sayHello({ plugin: 'p', version: '1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionClosed);
    expect((error as Error).message).toMatch(/protocol 1 only/);
  });

  it('times out a handshake that never comes', async () => {
    const timers = createManualTimers();
    const { kernel } = connectedPair({ timers });
    const waiting = kernel.awaitHello({ timeoutMs: 5000 });
    timers.advance(5000);
    await expect(waiting).rejects.toBeInstanceOf(HandshakeTimedOut);
  });

  it('round-trips a request to the handler and back', async () => {
    const { kernel, plugin } = connectedPair();
    plugin.onRequest((method, params) => ({ method, params }));
    expect(await kernel.request('echo', { text: 'hi', n: [1, 2] })).toEqual({ method: 'echo', params: { text: 'hi', n: [1, 2] } });
  });

  it('serves requests both ways on one connection', async () => {
    const { kernel, plugin } = connectedPair();
    plugin.onRequest(async (_m, params) => `plugin got ${String(params)}`);
    kernel.onRequest((_m, params) => `kernel got ${String(params)}`);
    const [a, b] = await Promise.all([kernel.request('x', 1), plugin.request('y', 2)]);
    expect([a, b]).toEqual(['plugin got 1', 'kernel got 2']);
  });

  it('matches concurrent requests by id when answers come out of order', async () => {
    const { kernel, plugin } = connectedPair();
    const gates: Array<() => void> = [];
    plugin.onRequest((_m, params) => new Promise((resolve) => gates.push(() => resolve(params))));
    const calls = [1, 2, 3, 4].map((n) => kernel.request('slow', n));
    await flush();
    expect(gates).toHaveLength(4);
    for (const i of [2, 0, 3, 1]) gates[i]!();
    expect(await Promise.all(calls)).toEqual([1, 2, 3, 4]);
  });

  it('times out a request, then drops and reports its late answer', async () => {
    const timers = createManualTimers();
    const { kernel, plugin, kernelErrors } = connectedPair({ timers });
    let answer: (() => void) | undefined;
    plugin.onRequest(() => new Promise((resolve) => (answer = () => resolve('late'))));
    const call = kernel.request('slow', null, { timeoutMs: 1000 });
    await flush();
    timers.advance(999);
    await flush();
    expect(kernelErrors).toEqual([]);
    timers.advance(1);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimedOut);
    expect(error).toMatchObject({ code: 'REQUEST_TIMED_OUT', method: 'slow', timeoutMs: 1000 });
    answer!();
    await flush();
    expect(kernelErrors.map((e) => [e.code, (e as { late?: boolean }).late])).toEqual([['UNMATCHED_RESPONSE', true]]);
  });

  it('turns a handler error into an error frame carrying its code', async () => {
    const { kernel, plugin } = connectedPair();
    plugin.onRequest((method) => {
      if (method === 'coded') throw Object.assign(new Error('disk full'), { code: 'NO_SPACE' });
      if (method === 'plain') throw new Error('plain failure');
      throw 'a thrown string';
    });
    const failure = (method: string) => kernel.request(method).catch((e: unknown) => e as PluginRequestFailed);
    const [coded, plain, thrown] = await Promise.all([failure('coded'), failure('plain'), failure('string')]);
    expect(coded).toBeInstanceOf(PluginRequestFailed);
    expect(coded).toMatchObject({ remoteCode: 'NO_SPACE', remoteMessage: 'disk full', method: 'coded' });
    expect(plain).toMatchObject({ remoteCode: 'HANDLER_FAILED', remoteMessage: 'plain failure' });
    expect(thrown).toMatchObject({ remoteCode: 'HANDLER_FAILED', remoteMessage: 'a thrown string' });
  });

  it('answers RESULT_NOT_ENCODABLE when a result would not fit in a frame', async () => {
    const { kernel, plugin } = connectedPair({ maxFrameBytes: 256 });
    plugin.onRequest(() => 'x'.repeat(1000));
    await expect(kernel.request('big')).rejects.toMatchObject({ remoteCode: 'RESULT_NOT_ENCODABLE' });
  });

  it('answers METHOD_NOT_FOUND when nothing serves requests', async () => {
    const { kernel } = connectedPair();
    await expect(kernel.request('anything')).rejects.toMatchObject({ remoteCode: 'METHOD_NOT_FOUND' });
  });

  it('delivers notifications one way, and reports a throwing notify handler', async () => {
    const { kernel, plugin, pluginErrors } = connectedPair();
    const seen: unknown[] = [];
    plugin.onNotify((method, params) => {
      if (method === 'bad') throw new Error('handler bug');
      seen.push([method, params]);
    });
    kernel.notify('tick', 1);
    kernel.notify('bad', 2);
    kernel.notify('tick', 3);
    await flush();
    expect(seen).toEqual([
      ['tick', 1],
      ['tick', 3],
    ]);
    expect(pluginErrors.map((e) => e.code)).toEqual(['NOTIFY_HANDLER_FAILED']);
  });

  it('close() rejects pending requests with ConnectionClosed, and the peer sees bye', async () => {
    const timers = createManualTimers();
    const { kernel, plugin } = connectedPair({ timers });
    plugin.onRequest(() => new Promise(() => {}));
    const byes: string[] = [];
    plugin.on('bye', (reason) => byes.push(reason));
    const call = kernel.request('never');
    kernel.close('shutting down');
    await expect(call).rejects.toBeInstanceOf(ConnectionClosed);
    await expect(kernel.request('after')).rejects.toBeInstanceOf(ConnectionClosed);
    expect(() => kernel.notify('after')).toThrow(ConnectionClosed);
    expect(timers.armed).toBe(0);
    await flush();
    expect(byes).toEqual(['shutting down']);
    expect(plugin.closed).toBe(true);
  });

  it('closes when the peer stream ends, rejecting what is pending', async () => {
    const { connection: kernel, inbound: toKernel } = rawPeer();
    const closes: string[] = [];
    kernel.on('close', (reason) => closes.push(reason));
    const call = kernel.request('x');
    toKernel.end();
    await expect(call).rejects.toBeInstanceOf(ConnectionClosed);
    expect(closes).toHaveLength(1);
  });

  it('reports garbage without crashing, answers it when it had an id, and keeps working', async () => {
    const { kernel, plugin, toKernel, kernelErrors, pluginErrors } = connectedPair({ maxFrameBytes: 1024 });
    plugin.onRequest((_m, params) => params);
    kernel.onRequest((_m, params) => params);
    toKernel.write(frameBody(Buffer.from([0xc1]))); // not msgpack
    toKernel.write(frameBody(Buffer.alloc(0))); // empty frame
    toKernel.write(frameBody(Buffer.from([0x92, 0x01]))); // truncated array
    toKernel.write(encodeFrame('just a string')); // wrong shape
    toKernel.write(encodeFrame({ type: 'request', id: 77, method: 5 })); // bad request, answerable
    toKernel.write(encodeFrame({ type: 'subscribe', id: 78 })); // unknown type, answerable
    toKernel.write(frameBody(Buffer.concat([Buffer.from([0x80]), Buffer.alloc(1999)]))); // oversized (starts as a map)
    toKernel.write(encodeFrame({ type: 'response', id: 999, result: 1 })); // answers nothing
    await flush();
    expect(kernelErrors.map((e) => e.code)).toEqual([
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'MALFORMED_FRAME',
      'UNKNOWN_MESSAGE_TYPE',
      'FRAME_TOO_LARGE',
      'UNMATCHED_RESPONSE',
    ]);
    // The two answerable frames were answered with error frames; the plugin has no such requests pending.
    expect(pluginErrors.map((e) => [e.code, (e as { id?: number }).id])).toEqual([
      ['UNMATCHED_RESPONSE', 77],
      ['UNMATCHED_RESPONSE', 78],
    ]);
    expect(kernel.closed).toBe(false);
    expect(await kernel.request('echo', 'still here')).toBe('still here');
    expect(await plugin.request('echo', 'both ways')).toBe('both ways');
  });

  it('closes at once on text that is not a frame, failing what is pending instead of letting it wait for its timeout', async () => {
    const { connection: kernel, inbound: toKernel, errors: kernelErrors } = rawPeer();
    const closes: string[] = [];
    kernel.on('close', (reason) => closes.push(reason));
    const call = kernel.request('x', null, { timeoutMs: 60_000 });
    toKernel.write('Listening on port 8080\n');
    await expect(call).rejects.toMatchObject({ code: 'CONNECTION_CLOSED', message: expect.stringContaining('"Listening on port 8080') });
    expect(kernelErrors.map((e) => e.code)).toEqual(['FRAMING_LOST']);
    expect(closes).toEqual([expect.stringContaining('framing lost: the peer wrote bytes that are not a frame')]);
    expect(kernel.closed).toBe(true);
  });

  it('fails a pending request whose answer is malformed', async () => {
    const { connection: kernel, inbound: toKernel, errors: kernelErrors } = rawPeer();
    const call = kernel.request('x');
    toKernel.write(encodeFrame({ type: 'error', id: 1, code: 42, message: 'bad code' }));
    await expect(call).rejects.toMatchObject({ code: 'MALFORMED_FRAME', inReplyTo: 1 });
    expect(kernelErrors.map((e) => e.code)).toEqual(['MALFORMED_FRAME']);
  });

  it('reports a second hello as unexpected', async () => {
    const { connection: kernel, inbound: toKernel, errors: kernelErrors } = rawPeer();
    const hello = encodeFrame({ type: 'hello', protocol: 1, plugin: 'p', version: '1' });
    toKernel.write(Buffer.concat([hello, hello]));
    await kernel.awaitHello();
    await flush();
    expect(kernelErrors.map((e) => e.code)).toEqual(['UNEXPECTED_MESSAGE']);
  });

  it('rejects a request whose params are too large to send, without sending it', async () => {
    const { kernel } = connectedPair({ maxFrameBytes: 64 });
    await expect(kernel.request('big', 'x'.repeat(100))).rejects.toMatchObject({ code: 'FRAME_TOO_LARGE' });
  });
});

/** The first frame of a chunk. */
const decodeFirst = (chunk: Buffer): unknown => decodeBody(chunk.subarray(4, 4 + chunk.readUInt32BE(0)));

// A red-team plugin sent requests as fast as its stdout drained and never read its stdin: the
// daemon grew to 9 GB in two minutes. What a peer can make a connection hold is bounded.
describe('PluginConnection against a flooding peer', () => {
  it(`stops reading while ${MAX_SERVING} of the peer's requests are being served, and reads again once half are answered`, async () => {
    const { connection, inbound, outbound } = rawPeer();
    outbound.resume();
    const answers: (() => void)[] = [];
    let served = 0;
    connection.onRequest(() => {
      served++;
      return new Promise<string>((resolve) => answers.push(() => resolve('ok')));
    });
    for (let id = 1; id <= MAX_SERVING * 2; id++) inbound.write(encodeFrame({ type: 'request', id, method: 'slow', params: null }));
    await flush();
    expect(inbound.isPaused()).toBe(true);
    // The frames of a chunk already read are served; none after the pause.
    const whilePaused = served;
    expect(whilePaused).toBeGreaterThanOrEqual(MAX_SERVING);
    expect(whilePaused).toBeLessThan(MAX_SERVING * 2);
    for (const answer of answers.splice(0, whilePaused - MAX_SERVING / 2 - 1)) answer();
    await flush();
    expect(served, 'one answer short of half, still paused').toBe(whilePaused);
    answers.shift()!();
    await flush();
    expect(served, 'read again').toBeGreaterThan(whilePaused);
    while (answers.length > 0) {
      for (const answer of answers.splice(0)) answer();
      await flush();
    }
    expect(served).toBe(MAX_SERVING * 2);
  });

  it('closes on a peer that leaves more answers unread than it may, saying why', async () => {
    const { connection, inbound, errors } = rawPeer();
    const closed = new Promise<string>((resolve) => connection.on('close', resolve));
    connection.onRequest(() => 'x'.repeat(64 * 1024));
    // Nobody reads `outbound`: every answer stays in the connection's write buffer.
    for (let id = 1; id <= MAX_UNREAD_BYTES / (64 * 1024) + 2; id++) {
      inbound.write(encodeFrame({ type: 'request', id, method: 'big', params: null }));
    }
    expect(await closed).toContain('left');
    expect(errors.map((e) => e.code)).toContain('ANSWERS_UNREAD');
    expect(connection.closed).toBe(true);
  });
});
