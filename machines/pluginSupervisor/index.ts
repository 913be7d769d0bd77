/** The plugin supervisor: its vocabulary, the crash-window rule and the machine. */
export * from './supervisorTypes.ts';
export * from './crashWindow.ts';
export * from './pluginSupervisorMachine.ts';
export * from './misbehaviourWindow.ts';
