/**
 * The web UI's live streams against browsers that never read: the bytes the daemon holds for
 * them stay under the per-stream and the total bound (the feed of the log waits for the reader,
 * pushed frames drop the stream that left too much, and the one that left most goes first when
 * all together leave too much); a browser that reads gets every event, in frames of bounded size,
 * and one that reads late catches up from where its feed waited.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../events/index.ts';
import {
  LiveStreams,
  LOG_HIGH_WATER_BYTES,
  logFrames,
  MAX_LIVE_FRAME_BYTES,
  MAX_LIVE_STREAMS,
  MAX_UNREAD_LIVE_BYTES,
  MAX_UNREAD_LIVE_TOTAL_BYTES,
} from '../../plugins/builtin/webui/liveStreams.ts';
import type { KernelLogView } from '../../plugins/sdk/builtinPlugin.ts';

/** A browser's response as LiveStreams writes it: bytes stay unread until `read`, and `reading` ones read at once. */
class FakeResponse extends EventEmitter {
  unread = 0;
  written = 0;
  frames: string[] = [];
  destroyed = false;
  readonly writableEnded = false;

  constructor(private readonly reading = false) {
    super();
  }

  get writableLength(): number {
    return this.unread;
  }

  writeHead(): this {
    return this;
  }

  write(chunk: string): boolean {
    const bytes = Buffer.byteLength(chunk);
    this.written += bytes;
    if (this.reading) this.frames.push(chunk);
    else this.unread += bytes;
    return this.unread < 16 * 1024;
  }

  /** The browser reads everything it was sent. */
  read(): void {
    this.unread = 0;
    this.emit('drain');
  }

  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.unread = 0; // the socket's buffers go with it
      queueMicrotask(() => this.emit('close'));
    }
    return this;
  }
}

const asResponse = (fake: FakeResponse) => fake as unknown as ServerResponse;

const event = (seq: number, bytes: number): RecordedEvent =>
  ({
    seq,
    id: `e${seq}`,
    stream: 's',
    version: seq,
    type: 'StageTimedOut',
    schemaVersion: 1,
    at: 0,
    data: { run: seq, text: 'x'.repeat(bytes) },
  }) as unknown as RecordedEvent;

/** A log of `batches` batches of `perBatch` events of about `bytes` each; each follow awaits its handler, as the store's subscription does. */
const logOf = (batches: number, perBatch: number, bytes: number) => {
  const all = Array.from({ length: batches * perBatch }, (_, i) => event(i + 1, bytes));
  const delivered: number[] = [];
  const view: KernelLogView = {
    read: async () => [],
    head: async () => all.length,
    follow: (afterSeq, onEvents) => {
      let stopped = false;
      const feed = (async () => {
        let index = all.findIndex((e) => e.seq > afterSeq);
        const id = delivered.push(0) - 1;
        while (!stopped && index >= 0 && index < all.length) {
          await (onEvents(all.slice(index, index + perBatch)) as unknown as Promise<void> | undefined);
          delivered[id]! += 1;
          index += perBatch;
        }
      })();
      return async () => {
        stopped = true;
        await feed;
      };
    },
  };
  return { view, all, delivered };
};

/** Turns of the event loop until `done` holds (the test's timeout is the bound). */
const waitFor = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
};

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('live streams', () => {
  it('hold at most the bounds for browsers that never read, whatever the log and the deliveries', async () => {
    const log = logOf(6, 200, 5_000); // about 6 MB of log for each stream to catch up on
    const notes: string[] = [];
    const live = new LiveStreams(log.view, (line) => notes.push(line));
    const browsers = Array.from({ length: MAX_LIVE_STREAMS }, () => new FakeResponse());
    let most = 0;
    const check = () => {
      most = Math.max(most, live.unreadBytes);
      expect(live.unreadBytes).toBeLessThanOrEqual(MAX_UNREAD_LIVE_TOTAL_BYTES);
      for (const browser of browsers) if (!browser.destroyed) expect(browser.unread).toBeLessThanOrEqual(MAX_UNREAD_LIVE_BYTES);
    };
    for (const browser of browsers) {
      live.open(asResponse(browser), 0);
      await settle();
      check();
    }
    // Each feed waited for its reader once it held a little more than the high water mark.
    expect(Math.max(...log.delivered)).toBeLessThan(6);
    for (let i = 0; i < 100; i++) {
      live.deliver({ channel: 'webui', target: 'webui:owner', kind: 'chunk', text: 'y'.repeat(100_000) } as never);
      live.machines({ actors: [], events: [], filler: 'z'.repeat(20_000) });
      check();
    }
    await settle();
    expect(most).toBeGreaterThan(LOG_HIGH_WATER_BYTES);
    expect(live.size).toBeLessThan(MAX_LIVE_STREAMS);
    expect(notes.some((n) => n.includes('together left more than 32 MiB unread, this one most'))).toBe(true);
    expect(notes.some((n) => n.includes('it left more than 4 MiB unread'))).toBe(true);
    await live.closeAll();
    expect(live.unreadBytes).toBe(0);
  });

  it('sends a reading browser every event in order, in frames of bounded size, an oversized event alone', async () => {
    const log = logOf(3, 300, 2_000);
    const big = event(log.all.length + 1, MAX_LIVE_FRAME_BYTES * 2);
    const frames = logFrames([...log.all, big]);
    const events = frames.flatMap((frame) => {
      const id = Number(/^id: (\d+)\n/.exec(frame)![1]);
      const batch = JSON.parse(/\ndata: (.*)\n\n$/.exec(frame)![1]!) as RecordedEvent[];
      expect(batch.at(-1)!.seq).toBe(id);
      if (batch.length > 1) expect(Buffer.byteLength(frame)).toBeLessThanOrEqual(MAX_LIVE_FRAME_BYTES + 200);
      return batch;
    });
    expect(events.map((e) => e.seq)).toEqual([...log.all, big].map((e) => e.seq));
    expect(JSON.parse(/\ndata: (.*)\n\n$/.exec(frames.at(-1)!)![1]!)).toHaveLength(1);

    const browser = new FakeResponse(true);
    const live = new LiveStreams(log.view, () => undefined);
    live.open(asResponse(browser), 0);
    await waitFor(() => log.delivered[0] === 3);
    const sent = browser.frames.filter((f) => f.startsWith('id: ')).flatMap((f) => JSON.parse(/\ndata: (.*)\n\n$/.exec(f)![1]!));
    expect(sent.map((e: RecordedEvent) => e.seq)).toEqual(log.all.map((e) => e.seq));
    await live.closeAll();
  });

  it('holds a slow reader’s feed where it is, and goes on once the browser reads', async () => {
    const log = logOf(8, 100, 5_000);
    const live = new LiveStreams(log.view, () => undefined);
    const browser = new FakeResponse();
    live.open(asResponse(browser), 0);
    await settle();
    const held = log.delivered[0]!;
    expect(held).toBeLessThan(8);
    expect(browser.unread).toBeGreaterThan(LOG_HIGH_WATER_BYTES);
    expect(browser.unread).toBeLessThanOrEqual(LOG_HIGH_WATER_BYTES + MAX_LIVE_FRAME_BYTES + 10_000);
    while (log.delivered[0]! < 8) {
      browser.read();
      await settle();
    }
    expect(browser.written).toBeGreaterThan(8 * 100 * 5_000);
    await live.closeAll();
    expect(browser.destroyed).toBe(true);
  });
});
