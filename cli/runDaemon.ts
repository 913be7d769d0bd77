/**
 * `homed [run]`: takes the data dir's lock (one daemon per dir), opens its log, assembles the
 * kernel (printing its layers), catches projections up, and runs until SIGINT, SIGTERM or, when
 * npm started it, its parent going away; then stops every module in reverse order and closes
 * the log, with every acknowledged event on disk, and only then lets the lock go.
 */
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import {
  GIVEN_FACILITIES,
  Facility,
  INSPECT_FACILITY,
  type Inspector,
  MACHINE_WATCH_FACILITY,
  startKernel,
} from '../actors/kernel/index.ts';
import { MachineWatch } from '../actors/inspect/machineWatch.ts';
import { startInspector } from '../actors/inspect/startInspector.ts';
import { daemonModules } from './daemonModules.ts';
import { compactHeap, oldSpaceSlackMb, settledRssMb } from './heapCompaction.ts';
import { compactWhenIdle, MIN_SLACK_MB } from './idleCompaction.ts';
import type { Memory } from '../actors/memory/openMemory.ts';
import { INDEX_SNAPSHOT_LAG } from '../actors/modules/config.ts';
import type { SchedulerFacility } from '../actors/modules/schedulerModule.ts';
import { formatLayers, type KernelOutput, planLayers } from '../machines/kernel/index.ts';
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { keepProcessAlive, randomIds, systemClock, systemTimers } from '../actors/clock/systemClock.ts';
import { EVENT_LOG_FILE, openEventLog, prepareDataDir } from './dataDir.ts';
import { lockDataDir } from './dataDirLock.ts';
import { listenForStop, type StopReason } from './stopRequests.ts';
import { keepLogRoom, LOG_ROOM_BYTES, LogRoomKeeper } from '../adapters/files/logRoom.ts';

/** The group-0 facilities homed gives the kernel: the open log, the real clock, the data dir. */
export const givenFacilities = (store: SqliteEventStore, dataDir: string) => ({
  [Facility.eventLog]: store,
  [Facility.clock]: systemClock,
  [Facility.timers]: systemTimers,
  [Facility.ids]: randomIds,
  [Facility.dataDir]: dataDir,
});

export type DaemonOptions = Readonly<{
  dataDir: string;
  inspectPort?: number;
  inspectHost?: string;
  out?: (line: string) => void;
}>;

export const runDaemon = async (options: DaemonOptions): Promise<number> => {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  // Listen before anything starts: a signal during boot must stop cleanly too.
  const stops = listenForStop({ timers: systemTimers, note: (line) => out(`homed: ${line}`) });
  try {
    const dir = prepareDataDir(options.dataDir);
    // Before anything in the dir is opened: a second daemon is refused here, having started nothing.
    const lock = lockDataDir(dir, 'homed run');
    try {
      return await runLocked(dir, options, out, stops.requested);
    } finally {
      lock.release();
    }
  } finally {
    stops.close();
  }
};

const MB = 1024 * 1024;

const stopCause = (reason: StopReason): string => (reason === 'parent exited' ? 'its parent exited' : `received ${reason}`);

const runLocked = async (
  dir: string,
  options: DaemonOptions,
  out: (line: string) => void,
  signalled: Promise<StopReason>,
): Promise<number> => {
  const room = keepLogRoom(dir);
  const roomKeeper = new LogRoomKeeper({ dir, timers: systemTimers, say: (line) => out(`homed: ${line}`) });
  const store = openEventLog(join(dir, EVENT_LOG_FILE), () => {
    const freed = roomKeeper.free();
    if (freed) {
      out(
        `homed: the disk of the data dir is full: the ${LOG_ROOM_BYTES / MB} MB kept for the log were freed so that it goes on; ` +
          'free room on that disk (subprocess plugins are stopped while it has less than security.sandbox.diskReserveMb): ' +
          'homed keeps them again once it has room',
      );
    }
    return freed;
  });
  const modules = daemonModules(undefined, dir);
  out(`homed: data dir ${dir} (pid ${process.pid})`);
  if (room.kind === 'not made') {
    out(`homed: no room is kept for the log on a full disk (${room.why}); free room on the disk of the data dir, then restart homed`);
  }
  const inspector = options.inspectPort === undefined ? undefined : await startInspector(options.inspectPort, options.inspectHost);
  if (inspector) out(`homed: inspector relay on ${inspector.url}: open it in a browser to watch the machines live`);
  if (inspector?.exposed) {
    out(`homed: the inspector relay listens on ${options.inspectHost}: anyone who can reach it sees every machine's events`);
  }
  out(formatLayers(planLayers(modules, GIVEN_FACILITIES)));
  // Every actor reports to the machine watch (the web UI's machines view) and, under --inspect, to the relay.
  const watch = new MachineWatch(() => systemClock.now());
  const relayed = inspector?.inspect as Inspector | undefined;
  const inspect = (event: InspectionEvent): void => {
    watch.inspect(event);
    if (typeof relayed === 'function') relayed(event);
    else relayed?.next?.(event);
  };
  const kernel = await startKernel({
    store,
    modules,
    given: givenFacilities(store, dir),
    optional: { [INSPECT_FACILITY]: inspect, [MACHINE_WATCH_FACILITY]: watch },
    inspect,
    pid: process.pid,
    dataDir: dir,
    log: (line) => out(`homed: ${line}`),
  });
  const booted = await Promise.race([kernel.ready.then(() => 'ready' as const), signalled]).catch(async (error: unknown) => {
    await kernel.done;
    roomKeeper.close();
    await store.close();
    inspector?.stop();
    throw error;
  });
  if (booted !== 'ready') {
    out(`homed: ${booted} while starting; stopping`);
    const output = await kernel.stop(stopCause(booted));
    roomKeeper.close();
    await store.close();
    inspector?.stop();
    return stoppedWith(output, out);
  }
  try {
    // A large start (the index snapshot read whole) frees hundreds of MB: ready once they are back with the system.
    if (compactHeap().freedMb >= MIN_SLACK_MB) await settledRssMb(systemTimers);
  } catch (error) {
    out(`homed: could not collect what starting left behind (${(error as Error).message}); it stays until V8 collects in full`);
  }
  out(`homed: ready, log at seq ${await store.headSeq()}; stop with Ctrl-C (SIGINT) or SIGTERM`);
  const memory = kernel.facilities.get<Memory>(Facility.memory);
  const stopCompacting = compactWhenIdle({
    scheduler: kernel.facilities.get<SchedulerFacility>(Facility.scheduler),
    timers: systemTimers,
    compact: () => compactHeap().ms,
    slackMb: oldSpaceSlackMb,
    log: (line) => out(`homed: ${line}`),
    first: async () => {
      let ms: number | undefined;
      try {
        ms = await memory.refreshIndexSnapshot(INDEX_SNAPSHOT_LAG);
      } catch (error) {
        out(
          `homed: could not write the recall index snapshot while idle (${(error as Error).message}); a start after a crash catches up from the last one`,
        );
        return;
      }
      if (ms === undefined) return;
      // The write leaves about twice the snapshot's size behind, mostly in buffers outside the old generation.
      const compaction = compactHeap();
      out(
        `homed: wrote the recall index snapshot while idle (${ms.toFixed(0)} ms) and compacted the heap (${compaction.ms.toFixed(0)} ms); ` +
          'a start after a crash catches up from here',
      );
    },
  });

  const release = keepProcessAlive();
  const signal = await Promise.race([signalled, kernel.done.then(() => 'module-failure' as const)]);
  release();
  // Upkeep under way (the index snapshot being written) ends before the memory stops and the log closes.
  await stopCompacting();
  out(`homed: stopping (${signal})`);
  const output = await kernel.stop(signal === 'module-failure' ? 'a module failed' : stopCause(signal));
  roomKeeper.close();
  await store.close();
  inspector?.stop();
  return stoppedWith(output, out);
};

/** The exit code of a stop, said: 1 when a module failed (also one that failed while a signal stopped the start), else 0. */
const stoppedWith = (output: KernelOutput, out: (line: string) => void): number => {
  if (output.failure) {
    process.stderr.write(`homed: stopped because module '${output.failure.module}' failed: ${output.failure.error}\n`);
    return 1;
  }
  out('homed: stopped; every acknowledged event is on disk');
  return 0;
};
