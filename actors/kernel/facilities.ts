/**
 * Facility names: the contract between kernel modules (and, later, the plugin SDK, which
 * re-exports these constants so a misspelled name is a compile error, not a silent no-start).
 */
export const Facility = {
  /** Group 0: opened before assembly. */
  eventLog: 'event-log',
  clock: 'clock',
  dataDir: 'data-dir',
  /** Produced by modules. */
  config: 'config',
  projections: 'projections',
  scheduler: 'scheduler',
  llm: 'llm',
  plugins: 'plugins',
  turns: 'turns',
  memory: 'memory',
} as const;

export type FacilityName = (typeof Facility)[keyof typeof Facility];

/** Facilities that exist before any module starts (the spec's "group 0"). */
export const GIVEN_FACILITIES: readonly FacilityName[] = [Facility.eventLog, Facility.clock, Facility.dataDir];

/** Given when the daemon runs with --inspect: the XState inspection observer. */
export const INSPECT_FACILITY = 'inspect';
