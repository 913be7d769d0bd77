/**
 * The browsers' live feeds (Server-Sent Events): each gets the log's events after the seq it
 * asks for (or its Last-Event-ID after a reconnect), in batches, and the web UI channel's
 * deliveries (streamed replies). Bounded whatever a browser does: at most MAX_LIVE_STREAMS at
 * once, and one that reads too slowly is dropped (its EventSource reconnects from its last seq).
 */
import type { ServerResponse } from 'node:http';
import type { RecordedEvent } from '../../../events/index.ts';
import type { KernelLogView } from '../../sdk/builtinPlugin.ts';
import type { ChannelDelivery } from '../../sdk/pluginApi.ts';

export const MAX_LIVE_STREAMS = 32;
/** Unread bytes above which a live stream is dropped. */
export const MAX_UNREAD_LIVE_BYTES = 16 * 1024 * 1024;
/** A comment line this often keeps proxies from closing an idle stream. */
export const KEEPALIVE_MS = 15_000;

type Live = { response: ServerResponse; stop: () => Promise<void> };

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
    live.stop = this.log.follow(afterSeq, (events) => this.sendEvents(live, events));
    response.once('close', () => this.close(live));
  }

  /** A delivery to the web UI channel goes to every browser; each shows the ones of its conversation. */
  deliver(delivery: ChannelDelivery): void {
    const frame = `event: delivery\ndata: ${JSON.stringify(delivery)}\n\n`;
    for (const live of this.streams) this.write(live, frame);
  }

  /** The machines' states (every actor's), sent when they moved. */
  machines(view: unknown): void {
    const frame = `event: machines\ndata: ${JSON.stringify(view)}\n\n`;
    for (const live of this.streams) this.write(live, frame);
  }

  keepAlive(): void {
    for (const live of this.streams) this.write(live, ': keep-alive\n\n');
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.streams].map((live) => this.close(live)));
  }

  private sendEvents(live: Live, events: readonly RecordedEvent[]): void {
    if (events.length === 0) return;
    const last = events[events.length - 1]!.seq;
    this.write(live, `id: ${last}\nevent: log\ndata: ${JSON.stringify(events)}\n\n`);
  }

  private write(live: Live, frame: string): void {
    if (!this.streams.has(live) || live.response.writableEnded) return;
    live.response.write(frame);
    if (live.response.writableLength > MAX_UNREAD_LIVE_BYTES) {
      this.note(`dropped a live stream: it left more than ${MAX_UNREAD_LIVE_BYTES >> 20} MiB unread`);
      void this.close(live);
    }
  }

  private async close(live: Live): Promise<void> {
    if (!this.streams.delete(live)) return;
    live.response.destroy();
    await live.stop();
  }
}
