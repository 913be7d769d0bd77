/**
 * Keeps each plugin's interrupt bucket and counts its inputs still being handed to the
 * scheduler; `decideInjection` decides. What waits is read from the scheduler itself, so the
 * count follows every end of an input (done, failed, cancelled, short-circuited, abandoned)
 * and a restart. Buckets outlive a plugin's restart: crashing does not refill them.
 */
import { decideInjection, InjectionThrottled, type InjectionBounds, type InterruptBucket } from './injectionBounds.ts';

export class InjectionGate {
  private readonly buckets = new Map<string, InterruptBucket>();
  /** Admitted inputs whose submission has not resolved yet: the scheduler may not hold them yet. */
  private readonly submitting = new Map<string, number>();

  /** `held`: the plugin's inputs the scheduler holds now. */
  constructor(
    readonly bounds: InjectionBounds,
    private readonly held: (plugin: string) => number,
  ) {}

  /**
   * Decides on an injection at `at`: refused, it says why and `handOver` is not called; admitted,
   * `handOver` passes it to the scheduler, and until that settles it counts as waiting.
   */
  async pass(
    plugin: string,
    kind: 'queued' | 'interrupt',
    at: number,
    handOver: () => Promise<unknown> | undefined,
  ): Promise<InjectionThrottled | null> {
    const waiting = this.held(plugin) + (this.submitting.get(plugin) ?? 0);
    const decision = decideInjection(this.buckets.get(plugin) ?? null, { kind, waiting, at }, this.bounds);
    this.buckets.set(plugin, decision.bucket);
    if (!decision.admitted) return new InjectionThrottled(plugin, decision, this.bounds);
    this.submitting.set(plugin, (this.submitting.get(plugin) ?? 0) + 1);
    try {
      await handOver();
      return null;
    } finally {
      const left = (this.submitting.get(plugin) ?? 1) - 1;
      if (left > 0) this.submitting.set(plugin, left);
      else this.submitting.delete(plugin);
    }
  }
}
