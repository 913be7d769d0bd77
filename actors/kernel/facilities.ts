/**
 * Facility names and what each one is: the contract between kernel modules (and the plugin
 * host, which reads them through the actors' public surface). A module reads a facility as the
 * type its name stands for, so a misspelled name or a wrong type is a compile error.
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { Clock, IdSource, Timers } from '../../events/index.ts';
import type { LlmFacility } from '../llm/llmFacility.ts';
import type { Memory } from '../memory/openMemory.ts';
import type { Settings } from '../modules/config.ts';
import type { ProjectionsFacility } from '../modules/projectionsModule.ts';
import type { SchedulerFacility } from '../modules/schedulerModule.ts';
import type { PluginsFacility } from './pluginsFacility.ts';
import type { TurnRunner } from '../turn/turnRunner.ts';
import type { SecurityProxy } from '../security/securityProxy.ts';
import type { MachineWatch } from '../inspect/machineWatch.ts';

export const Facility = {
  /** Group 0: given before assembly. */
  eventLog: 'event-log',
  clock: 'clock',
  timers: 'timers',
  ids: 'ids',
  dataDir: 'data-dir',
  /** Produced by modules. */
  config: 'config',
  projections: 'projections',
  scheduler: 'scheduler',
  llm: 'llm',
  plugins: 'plugins',
  turns: 'turns',
  memory: 'memory',
  output: 'output',
  security: 'security',
} as const;

export type FacilityName = (typeof Facility)[keyof typeof Facility];

/** The XState inspection observer every actor reports to (the machine watch, and the Stately relay under --inspect). */
export const INSPECT_FACILITY = 'inspect';

/** What every running machine is doing, for the web UI (given by the daemon). */
export const MACHINE_WATCH_FACILITY = 'machine-watch';

export type Inspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** What each facility is. */
export type FacilityTypes = {
  'event-log': SqliteEventStore;
  clock: Clock;
  timers: Timers;
  ids: IdSource;
  'data-dir': string;
  config: Settings;
  projections: ProjectionsFacility;
  scheduler: SchedulerFacility;
  llm: LlmFacility;
  plugins: PluginsFacility;
  turns: TurnRunner;
  memory: Memory;
  output: Readonly<{ caughtUp(seq?: number): Promise<void> }>;
  inspect: Inspector;
  'machine-watch': MachineWatch;
  security: SecurityProxy;
};

/** Facilities that exist before any module starts (the spec's "group 0"). */
export const GIVEN_FACILITIES: readonly FacilityName[] = [
  Facility.eventLog,
  Facility.clock,
  Facility.timers,
  Facility.ids,
  Facility.dataDir,
];
