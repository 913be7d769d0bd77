/** Reading a kernel journal in tests: one short line per event, and modules made of a trace. */
import type { KernelModule } from '../../actors/kernel/index.ts';
import type { RecordedEvent } from '../../events/index.ts';

/** `> boot` for a message, `LayerStartRequested 1: llm, memory`, `ModuleStarted config`, `KernelStopped`. */
export const journalLine = (event: RecordedEvent): string => {
  const data = event.data as { message?: { type: string; module?: string }; module?: string; layer?: number; modules?: string[] };
  if (event.type === 'InputDelivered') return `> ${[data.message!.type, data.message!.module].filter(Boolean).join(' ')}`;
  if (event.type === 'LayerStartRequested') return `LayerStartRequested ${data.layer}: ${data.modules!.join(', ')}`;
  return data.module === undefined ? event.type : `${event.type} ${data.module}`;
};

export const journalLines = (events: readonly RecordedEvent[]): string[] => events.map(journalLine);

/** The facts alone, without the messages that caused them. */
export const factLines = (events: readonly RecordedEvent[]): string[] => journalLines(events.filter((e) => e.type !== 'InputDelivered'));

/** The kernel assembles any facility graph; these tests name facilities of their own, outside the daemon's. */
export type AnyModule = Readonly<{
  name: string;
  requires: readonly string[];
  provides: readonly string[];
  init(context: {
    require(f: string): unknown;
    provide(f: string, value: unknown): void;
    fail(e: unknown): void;
    readonly stopping: AbortSignal;
  }): void | Promise<void>;
  stop?(): void | Promise<void>;
}>;

export const asModule = (m: AnyModule): KernelModule => m as unknown as KernelModule;

/** A module that reads what it requires, yields once, provides what it declares, and writes each step to `trace`. */
export const tracedModule = (
  name: string,
  requires: string[],
  provides: string[],
  trace: string[],
  behaviour: Partial<AnyModule> = {},
): KernelModule =>
  asModule({
    name,
    requires,
    provides,
    async init(context) {
      trace.push(`init ${name}`);
      for (const facility of requires) context.require(facility);
      await new Promise((resolve) => setImmediate(resolve));
      for (const facility of provides) context.provide(facility, `${facility}-value`);
      trace.push(`ready ${name}`);
    },
    stop() {
      trace.push(`stop ${name}`);
    },
    ...behaviour,
  });
