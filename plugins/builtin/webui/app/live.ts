/**
 * The page's one live feed (Server-Sent Events from /api/live): the log's events as they are
 * committed, and the web UI channel's deliveries. EventSource reconnects by itself and the
 * server resumes after the Last-Event-ID it sent, so nothing is missed or repeated.
 */
import type { Delivery, MachinesLive } from './api.ts';
import type { LoggedEvent } from './chatFold.ts';

type Listener<T> = (value: T) => void;

export class LiveFeed {
  private readonly onEvents = new Set<Listener<readonly LoggedEvent[]>>();
  private readonly onDelivery = new Set<Listener<Delivery>>();
  private readonly onState = new Set<Listener<boolean>>();
  private readonly onMachines = new Set<Listener<MachinesLive>>();
  head = 0;

  start(afterSeq: number): void {
    this.head = afterSeq;
    const source = new EventSource(`/api/live?after=${afterSeq}`);
    source.addEventListener('log', (message) => this.receive(JSON.parse((message as MessageEvent<string>).data) as LoggedEvent[]));
    source.addEventListener('delivery', (message) => {
      const delivery = JSON.parse((message as MessageEvent<string>).data) as Delivery;
      for (const listener of this.onDelivery) listener(delivery);
    });
    source.addEventListener('machines', (message) => {
      const view = JSON.parse((message as MessageEvent<string>).data) as MachinesLive;
      for (const listener of this.onMachines) listener(view);
    });
    source.addEventListener('open', () => this.state(true));
    source.addEventListener('error', () => this.state(false));
  }

  /** A batch of committed events, as the feed delivers it (the browser test drives the views through here too). */
  receive(events: readonly LoggedEvent[]): void {
    if (events.length === 0) return;
    this.head = events[events.length - 1]!.seq;
    for (const listener of this.onEvents) listener(events);
  }

  events(listener: Listener<readonly LoggedEvent[]>): () => void {
    this.onEvents.add(listener);
    return () => this.onEvents.delete(listener);
  }

  deliveries(listener: Listener<Delivery>): () => void {
    this.onDelivery.add(listener);
    return () => this.onDelivery.delete(listener);
  }

  machines(listener: Listener<MachinesLive>): () => void {
    this.onMachines.add(listener);
    return () => this.onMachines.delete(listener);
  }

  connection(listener: Listener<boolean>): void {
    this.onState.add(listener);
  }

  private state(connected: boolean): void {
    for (const listener of this.onState) listener(connected);
  }
}
