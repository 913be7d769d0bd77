/** The input scheduler: its types, rules, decider, fold and machine. */
export * from './schedulerTypes.ts';
export * from './schedulingRules.ts';
export * from './evolve.ts';
export * from './decide.ts';
export * from './schedulerMachine.ts';
