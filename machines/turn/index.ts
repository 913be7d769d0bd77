/** The turn: budget, prompt assembly, the tool registry, the tool batch and the turn machine. */
export * from './tokenBudget.ts';
export * from './systemPrompt.ts';
export * from './toolRegistry.ts';
export * from './outputChannels.ts';
export * from './turnTypes.ts';
export * from './toolCallStep.ts';
export * from './toolBatch.ts';
export * from './turnMachine.ts';
export * from './provideTurn.ts';
