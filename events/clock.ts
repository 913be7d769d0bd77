/**
 * Time and ids enter the system through these interfaces only. The deterministic core never
 * reads the wall clock or a random source; the running system injects a real clock, tests
 * and replay inject a virtual one.
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export interface IdSource {
  next(): string;
}

/** Timers the running system arms; tests and replay pass manual ones, so nothing waits on the wall clock. */
export interface Timers {
  setTimer(fire: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** A clock that moves only when told to: tests and replay advance it explicitly. */
export class VirtualClock implements Clock {
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a virtual clock only moves forward; got ${ms} ms`);
    this.current += ms;
  }
  set(epochMs: number): void {
    if (epochMs < this.current) throw new RangeError(`a virtual clock only moves forward; ${epochMs} < ${this.current}`);
    this.current = epochMs;
  }
}

/** Deterministic ids: `prefix-1`, `prefix-2`, ... */
export class SequentialIds implements IdSource {
  private counter = 0;
  constructor(private readonly prefix = 'evt') {}
  next(): string {
    this.counter += 1;
    return `${this.prefix}-${this.counter}`;
  }
}
