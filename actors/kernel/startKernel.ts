/**
 * Assembles and runs the kernel: plans the layers, then runs the kernel machine journaled on
 * the `kernel` stream. The boot, each module's outcome and a stop request are messages, each
 * appended with the facts it caused; a layer's inits and a module's stop run only after their
 * fact is committed, and what they report comes back as a message.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { KERNEL_STREAM, type Clock, type EventStore, type IdSource } from '../../events/index.ts';
import {
  kernelMachine,
  kernelPhase,
  planLayers,
  type KernelFact,
  type KernelMessage,
  type KernelOutput,
  type ModuleLayers,
} from '../../machines/kernel/index.ts';
import { randomIds, systemClock } from '../clock/systemClock.ts';
import { JournaledActor } from '../journal/journaledActor.ts';
import { FacilityRegistry } from './facilityRegistry.ts';
import { KernelBootFailed, KernelStoppedWhileStarting } from './kernelErrors.ts';
import type { KernelModule } from './kernelModule.ts';
import { ModuleRunner } from './moduleRunner.ts';

export type StartKernelOptions = Readonly<{
  store: EventStore;
  modules: readonly KernelModule[];
  /** Group 0 facilities, ready before any module starts. */
  given: Readonly<Record<string, unknown>>;
  /** Given facilities that may be absent, read with `context.optional` (not part of the graph). */
  optional?: Readonly<Record<string, unknown>>;
  pid: number;
  dataDir: string;
  /** The time each message is stamped with (default: the system clock). */
  clock?: Clock;
  /** Ids of the recorded messages and of the boot (default: random). */
  ids?: IdSource;
  log?: (line: string) => void;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}>;

export type KernelHandle = Readonly<{
  layers: ModuleLayers;
  facilities: FacilityRegistry;
  /** Resolves when every layer started; rejects with `KernelBootFailed` or `KernelStoppedWhileStarting`. */
  ready: Promise<void>;
  /** Resolves once the kernel stopped and every lifecycle event is in the log. */
  done: Promise<KernelOutput>;
  stop(reason: string): Promise<KernelOutput>;
}>;

type Settle<T> = { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void };

const settleOnce = <T>(): Settle<T> => {
  const settle = {} as Settle<T>;
  settle.promise = new Promise<T>((resolve, reject) => Object.assign(settle, { resolve, reject }));
  return settle;
};

export const startKernel = async (options: StartKernelOptions): Promise<KernelHandle> => {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const given = Object.keys(options.given);
  // A graph that cannot be assembled is refused here, before anything is recorded.
  const layers = planLayers(options.modules, given);
  const facilities = new FacilityRegistry(options.given, options.optional);
  const ready = settleOnce<void>();
  ready.promise.catch(() => undefined); // observed through `done` as well; avoid an unhandled rejection
  const done = settleOnce<KernelOutput>();

  const perform = (facts: readonly KernelFact[]) => {
    for (const fact of facts) {
      if (fact.type === 'LayerStartRequested') for (const module of fact.data.modules) runner.init(module);
      else if (fact.type === 'ModuleStopRequested') runner.stop(fact.data.module);
    }
  };
  const observe = () => {
    const snapshot = journal.snapshot;
    if (snapshot.status === 'done') {
      const output = snapshot.output!;
      ready.reject(output.failure ? new KernelBootFailed(output.failure) : new KernelStoppedWhileStarting(output.reason));
      done.resolve(output);
    } else if (kernelPhase(snapshot.context) === 'running') ready.resolve();
  };
  const journal = new JournaledActor({
    store: options.store,
    stream: KERNEL_STREAM,
    logic: kernelMachine,
    input: undefined,
    ids,
    correlation: ids.next(),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    onFacts: (facts) => {
      perform(facts as readonly KernelFact[]);
      observe();
    },
  });
  const send = (message: KernelMessage) =>
    journal.deliver(message).catch((error: unknown) => {
      ready.reject(error);
      done.reject(error);
    });
  const runner = new ModuleRunner(
    new Map(options.modules.map((m) => [m.name, m])),
    facilities,
    options.log ?? (() => undefined),
    (report) => void send({ ...report, at: clock.now() }),
  );

  const modules = options.modules.map(({ name, requires, provides }) => ({ name, requires: [...requires], provides: [...provides] }));
  const boot: KernelMessage = { type: 'boot', at: clock.now(), pid: options.pid, dataDir: options.dataDir, given, modules, layers };
  await journal.deliver(boot);
  return {
    layers,
    facilities,
    ready: ready.promise,
    done: done.promise,
    stop: (reason) => {
      void send({ type: 'stop', at: clock.now(), reason });
      return done.promise;
    },
  };
};
