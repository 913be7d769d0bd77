/**
 * The browsers' live feeds (Server-Sent Events): each gets the log's events after the seq it
 * asks for (or its Last-Event-ID after a reconnect), in frames of at most MAX_LIVE_FRAME_BYTES,
 * and the web UI channel's deliveries (streamed replies). Bounded whatever a browser does: at
 * most MAX_LIVE_STREAMS at once; the log is read on only as fast as a browser reads (its feed
 * waits while more than LOG_HIGH_WATER_BYTES are unread); a stream that leaves more than
 * MAX_UNREAD_LIVE_BYTES unread is dropped, and when all of them together leave more than
 * MAX_UNREAD_LIVE_TOTAL_BYTES, the one that left most is dropped (its EventSource reconnects
 * from its last seq).
 */
import type { ServerResponse } from 'node:http';
import type { RecordedEvent } from '../../../events/index.ts';
import type { KernelLogView } from '../../sdk/builtinPlugin.ts';
import type { ChannelDelivery } from '../../sdk/pluginApi.ts';

export const MAX_LIVE_STREAMS = 32;
/** Unread bytes above which a live stream is dropped. */
export const MAX_UNREAD_LIVE_BYTES = 4 * 1024 * 1024;
/** Unread bytes of every live stream together above which the stream that left most unread is dropped. */
export const MAX_UNREAD_LIVE_TOTAL_BYTES = 32 * 1024 * 1024;
/** The log's events go out in frames of about this many bytes at most (an event bigger than that goes alone). */
export const MAX_LIVE_FRAME_BYTES = 256 * 1024;
/** Unread bytes above which a stream's feed of the log waits for the browser to read. */
export const LOG_HIGH_WATER_BYTES = 1024 * 1024;
/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEPALIVE_MS = 15_000;

type Live = { response: ServerResponse; stop: () => Promise<void> };

/** `events` as SSE frames of about `maxBytes` each, every frame with the seq of its last event as its id. */
export const logFrames = (events: readonly RecordedEvent[], maxBytes = MAX_LIVE_FRAME_BYTES): string[] => {
  const frames: string[] = [];
  let parts: string[] = [];
  let bytes = 0;
  let last = 0;
  const flush = () => {
    if (parts.length > 0) frames.push(`id: ${last}\nevent: log\ndata: [${parts.join(',')}]\n\n`);
    parts = [];
    bytes = 0;
  };
  for (const event of events) {
    const text = JSON.stringify(event);
    const size = Buffer.byteLength(text);
    if (parts.length > 0 && bytes + size > maxBytes) flush();
    parts.push(text);
    bytes += size + 1;
    last = event.seq;
  }
  flush();
  return frames;
};

/** Resolves once `response` has at most `bytes` unread, or is closed. */
const unreadAtMost = (response: ServerResponse, bytes: number): Promise<void> => {
  if (response.writableLength <= bytes || response.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
};

export class LiveStreams {
  private readonly streams = new Set<Live>();

  constructor(
    private readonly log: KernelLogView,
    private readonly note: (line: string) => void,
  ) {}

  get size(): number {
    return this.streams.size;
  }

  get full(): boolean {
    return this.streams.size >= MAX_LIVE_STREAMS;
  }

  /** Bytes written to the open streams that their browsers have not read yet. */
  get unreadBytes(): number {
    let total = 0;
    for (const live of this.streams) total += live.response.writableLength;
    return total;
  }

  /** Starts a feed on `response` from the events after `afterSeq`. */
  open(response: ServerResponse, afterSeq: number): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.write('retry: 1000\n\n');
    const live: Live = { response, stop: async () => undefined };
    this.streams.add(live);
    // The follow waits for each batch to be sent, so a browser that reads slowly holds back only its own feed.
    live.stop = this.log.follow(afterSeq, (events) => this.sendEvents(live, events));
    response.once('close', () => this.close(live));
  }

  /** A delivery to the web UI channel goes to every browser; each shows the ones of its conversation. */
  deliver(delivery: ChannelDelivery): void {
    const frame = `event: delivery\ndata: ${JSON.stringify(delivery)}\n\n`;
    for (const live of this.streams) this.push(live, frame);
  }

  /** The machines' states (every actor's), sent when they moved. */
  machines(view: unknown): void {
    const frame = `event: machines\ndata: ${JSON.stringify(view)}\n\n`;
    for (const live of this.streams) this.push(live, frame);
  }

  keepAlive(): void {
    for (const live of this.streams) this.push(live, ': keep-alive\n\n');
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.streams].map((live) => this.close(live)));
  }

  /** The log's events, a frame at a time, each once the browser has read what was sent before. */
  private async sendEvents(live: Live, events: readonly RecordedEvent[]): Promise<void> {
    for (const frame of logFrames(events)) {
      await unreadAtMost(live.response, LOG_HIGH_WATER_BYTES);
      if (!this.writable(live)) return;
      live.response.write(frame);
      this.keepWithinTotal();
    }
  }

  /** A frame the kernel pushes (a delivery, the machines, a keep-alive): the browser's reading does not hold it back. */
  private push(live: Live, frame: string): void {
    if (!this.writable(live)) return;
    live.response.write(frame);
    if (live.response.writableLength > MAX_UNREAD_LIVE_BYTES) {
      this.drop(live, `it left more than ${MAX_UNREAD_LIVE_BYTES >> 20} MiB unread`);
      return;
    }
    this.keepWithinTotal();
  }

  private writable(live: Live): boolean {
    return this.streams.has(live) && !live.response.writableEnded;
  }

  /** Drops the streams that left most unread until all of them together are within the total. */
  private keepWithinTotal(): void {
    while (this.unreadBytes > MAX_UNREAD_LIVE_TOTAL_BYTES) {
      let most: Live | undefined;
      for (const live of this.streams) if (!most || live.response.writableLength > most.response.writableLength) most = live;
      this.drop(most!, `the live streams together left more than ${MAX_UNREAD_LIVE_TOTAL_BYTES >> 20} MiB unread, this one most`);
    }
  }

  private drop(live: Live, why: string): void {
    this.note(`dropped a live stream: ${why}`);
    void this.close(live);
  }

  private async close(live: Live): Promise<void> {
    if (!this.streams.delete(live)) return;
    live.response.destroy();
    await live.stop();
  }
}
