/**
 * Assembles and runs the kernel: plans the layers, journals `KernelStarted`, runs the kernel
 * machine with real module actors, and appends every lifecycle fact it emits to the
 * `kernel` stream (correlated with the boot, caused by `KernelStarted`).
 */
import { createActor, toPromise, type InspectionEvent, type Observer } from 'xstate';
import { KERNEL_STREAM, HologramError, type EventStore } from '../../events/index.ts';
import { kernelMachine, planLayers, type KernelFact, type KernelOutput, type ModuleLayers } from '../../machines/kernel/index.ts';
import { FacilityRegistry } from './facilityRegistry.ts';
import type { KernelModule } from './kernelModule.ts';
import { createModuleLogic } from './moduleActor.ts';

export class KernelBootFailed extends HologramError {
  readonly code = 'KERNEL_BOOT_FAILED';
  constructor(readonly failure: NonNullable<KernelOutput['failure']>) {
    super(`the kernel did not start: module '${failure.module}' failed: ${failure.error}`);
  }
}

export type StartKernelOptions = Readonly<{
  store: EventStore;
  modules: readonly KernelModule[];
  /** Group 0 facilities, ready before any module starts. */
  given: Readonly<Record<string, unknown>>;
  /** Given facilities that may be absent, read with `context.optional` (not part of the graph). */
  optional?: Readonly<Record<string, unknown>>;
  pid: number;
  dataDir: string;
  log?: (line: string) => void;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}>;

export type KernelHandle = Readonly<{
  layers: ModuleLayers;
  facilities: FacilityRegistry;
  /** Resolves when every layer started; rejects with `KernelBootFailed`. */
  ready: Promise<void>;
  /** Resolves once the kernel stopped and every lifecycle event is in the log. */
  done: Promise<KernelOutput>;
  stop(reason: string): Promise<KernelOutput>;
}>;

export const startKernel = async (options: StartKernelOptions): Promise<KernelHandle> => {
  const log = options.log ?? (() => undefined);
  const givenNames = Object.keys(options.given);
  const layers = planLayers(options.modules, givenNames);
  const started = await options.store.append(KERNEL_STREAM, [
    { type: 'KernelStarted', data: { pid: options.pid, layers: layers.map((l) => [...l]), dataDir: options.dataDir } },
  ]);
  const bootId = started.events[0]!.id;

  const facilities = new FacilityRegistry(options.given, options.optional);
  const byName = new Map(options.modules.map((m) => [m.name, m]));
  const machine = kernelMachine.provide({ actors: { module: createModuleLogic(byName, facilities, log) } });
  const actor = createActor(machine, {
    input: { modules: options.modules, layers, given: givenNames },
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });

  const appends: Promise<unknown>[] = [];
  actor.on('*', (fact: KernelFact) => {
    appends.push(options.store.append(KERNEL_STREAM, [{ ...fact, causation: bootId, correlation: bootId }]));
  });

  const ready = new Promise<void>((resolve, reject) => {
    const subscription = actor.subscribe((snapshot) => {
      if (snapshot.matches('running')) {
        subscription.unsubscribe();
        resolve();
      } else if (snapshot.status === 'done') {
        subscription.unsubscribe();
        const output = snapshot.output!;
        reject(output.failure ? new KernelBootFailed(output.failure) : new Error(`the kernel stopped while starting: ${output.reason}`));
      }
    });
  });
  ready.catch(() => undefined); // observed through `done` as well; avoid an unhandled rejection

  const done = toPromise(actor).then(async (output) => {
    await Promise.all(appends);
    return output;
  });
  actor.start();

  return {
    layers,
    facilities,
    ready,
    done,
    stop: (reason) => {
      actor.send({ type: 'STOP', reason });
      return done;
    },
  };
};
