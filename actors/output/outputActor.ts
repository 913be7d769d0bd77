/**
 * The one way output leaves the kernel: the output actor tails the log from where it started
 * and delivers to channels what committed events say the user receives (`foldOutput`), in log
 * order per route, through a bounded pump per route. A delivery that fails or is dropped is
 * reported, never retried past the log. Nothing is delivered that is not in the log.
 */
import type { EventStore, Subscription } from '../../events/index.ts';
import { emptyOutputState, foldOutput, learnParkedTurn, resumesUnknownTurn, type Delivery, type Route } from './outputDeliveries.ts';
import { OutputPump, type PumpReport } from './outputPump.ts';
import { isRealtime } from '../../machines/turn/index.ts';

export type OutputActorOptions = Readonly<{
  store: EventStore;
  /** Hands a delivery to the channel's plugin. */
  deliver(delivery: Delivery): Promise<void>;
  report(report: PumpReport): void;
  /** Items queued per route before chunks are joined (or, on a real-time channel, the oldest dropped). */
  capacity?: number;
}>;

const routeKey = (route: Route): string => `${route.channel}\u0000${route.target ?? ''}`;

export class OutputActor {
  private readonly state = emptyOutputState();
  private readonly pumps = new Map<string, OutputPump<Delivery>>();
  private readonly draining = new Map<string, Promise<void>>();
  private subscription: Subscription | undefined;

  constructor(private readonly options: OutputActorOptions) {}

  /**
   * Starts after `afterSeq` (the log's head by default): what was committed before this process
   * is not delivered again. The daemon gives the seq before its boot began, so an input a plugin
   * took while the boot went on (the cli socket listens before this actor starts) keeps its route.
   */
  async start(afterSeq?: number): Promise<void> {
    afterSeq ??= await this.options.store.headSeq();
    // What the replies of a restart need (routes, toolsets) is recorded after the start, except toolsets: learn those first.
    for (const event of await this.options.store.readAll({ types: ['ToolsetRecorded'] })) foldOutput(this.state, event);
    this.subscription = this.options.store.subscribe({
      afterSeq,
      handler: async (events) => {
        for (const event of events) {
          if (resumesUnknownTurn(this.state, event)) {
            const [request] = await this.options.store.readStream(event.stream, { maxCount: 1 });
            if (request) learnParkedTurn(this.state, request);
          }
          for (const delivery of foldOutput(this.state, event)) this.enqueue(delivery);
        }
      },
      onError: (error) => this.options.report({ type: 'send-failed', channel: '(log)', chunk: '', error: String(error) }),
    });
  }

  /** Resolves once every committed event up to `seq` has been folded and queued. */
  caughtUp(seq?: number): Promise<void> {
    return this.subscription?.caughtUp(seq) ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    await Promise.all([...this.pumps.values()].map((pump) => pump.close()));
    await Promise.all(this.draining.values());
  }

  private enqueue(delivery: Delivery): void {
    const key = routeKey(delivery.route);
    let pump = this.pumps.get(key);
    if (!pump) {
      // A route whose last reply is still draining: the next reply waits for it, so replies never interleave.
      const before = this.draining.get(key) ?? Promise.resolve();
      const device = { send: async (item: Delivery) => before.then(() => this.options.deliver(item)) };
      pump = new OutputPump<Delivery>({
        channel: delivery.route.channel,
        resolveDevice: () => device,
        report: this.options.report,
        capacity: this.options.capacity ?? 1_024,
        textOf: (item) => item.text,
        realtime: isRealtime(this.state.channels.get(delivery.route.channel)),
        droppable: (item) => item.kind === 'chunk',
        coalesce: (last, next) => (last.kind === 'chunk' && next.kind === 'chunk' ? { ...last, text: last.text + next.text } : undefined),
      });
      this.pumps.set(key, pump);
    }
    pump.push(delivery);
    if (delivery.kind !== 'end') return;
    // A reply ended: its pump is let go once drained, so routes of sessions long gone hold nothing.
    this.pumps.delete(key);
    const drained = pump.close().finally(() => {
      if (this.draining.get(key) === drained) this.draining.delete(key);
    });
    this.draining.set(key, drained);
  }
}
