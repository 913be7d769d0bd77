/**
 * The output pump: streamed text on its way to a channel. The queue is bounded (64 items by
 * default): when it is full, a real-time channel drops its oldest chunk (reported), and any
 * other channel has the new chunk joined to the last queued one (`coalesce`), so nothing is
 * lost and memory stays bounded by the text itself. The channel's device is resolved afresh for
 * every item (a device can come and go mid-stream); drops and missing devices are reported,
 * never silent; `close` drains what is queued before it resolves.
 */

export type OutputDevice<T = string> = Readonly<{ send(item: T): void | Promise<void> }>;

export type PumpReport =
  | Readonly<{ type: 'dropped'; channel: string; chunk: string; reason: 'queue full' }>
  | Readonly<{ type: 'no-device'; channel: string; chunk: string }>
  | Readonly<{ type: 'send-failed'; channel: string; chunk: string; error: string }>;

export type OutputPumpOptions<T> = Readonly<{
  channel: string;
  resolveDevice: (channel: string) => OutputDevice<T> | undefined;
  report: (report: PumpReport) => void;
  capacity?: number;
  /** The text a report shows for an item (default: the item itself). */
  textOf?: (item: T) => string;
  /** A live stream: when full, drop the oldest item that `droppable` allows rather than join. */
  realtime?: boolean;
  /** Which items may be dropped (default: any). */
  droppable?: (item: T) => boolean;
  /** `next` joined onto `last` when the queue is full, or undefined when the two cannot be joined. */
  coalesce?: (last: T, next: T) => T | undefined;
}>;

export const DEFAULT_PUMP_CAPACITY = 64;

export class OutputPump<T = string> {
  private readonly queue: T[] = [];
  private readonly capacity: number;
  private draining: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: OutputPumpOptions<T>) {
    this.capacity = options.capacity ?? DEFAULT_PUMP_CAPACITY;
    if (!(this.capacity >= 1)) throw new RangeError(`an output pump needs a capacity of at least 1; got ${this.capacity}`);
  }

  /** Queues an item; when the queue is full, a real-time pump drops its oldest droppable item (reported), any other joins it to the last. */
  push(chunk: T): void {
    if (this.closed) throw new Error(`the output pump of channel '${this.options.channel}' is closed`);
    if (this.queue.length >= this.capacity) {
      if (this.options.realtime) {
        const oldest = this.queue.findIndex((item) => this.options.droppable?.(item) ?? true);
        if (oldest >= 0) {
          const [dropped] = this.queue.splice(oldest, 1);
          this.options.report({ type: 'dropped', channel: this.options.channel, chunk: this.text(dropped!), reason: 'queue full' });
        }
      } else {
        const joined = this.queue.length > 0 ? this.options.coalesce?.(this.queue.at(-1)!, chunk) : undefined;
        if (joined !== undefined) {
          this.queue[this.queue.length - 1] = joined;
          this.draining ??= this.drain();
          return;
        }
      }
    }
    this.queue.push(chunk);
    this.draining ??= this.drain();
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Stops taking chunks and resolves once every queued chunk was delivered or reported. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
  }

  private text(item: T): string {
    return this.options.textOf ? this.options.textOf(item) : String(item);
  }

  private async drain(): Promise<void> {
    // Yield first, so `draining` is assigned before this can finish and clear it.
    await null;
    try {
      for (let chunk = this.queue.shift(); chunk !== undefined; chunk = this.queue.shift()) {
        const { channel } = this.options;
        const device = this.options.resolveDevice(channel);
        if (!device) {
          this.options.report({ type: 'no-device', channel, chunk: this.text(chunk) });
          continue;
        }
        try {
          await device.send(chunk);
        } catch (error) {
          this.options.report({ type: 'send-failed', channel, chunk: this.text(chunk), error: (error as Error).message ?? String(error) });
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}
