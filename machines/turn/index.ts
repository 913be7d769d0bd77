/** The turn: budget, prompt assembly, the tool registry, the turn's state, its decider and its machine. */
export * from './tokenBudget.ts';
export * from './turnContext.ts';
export * from './systemPrompt.ts';
export * from './outputChannels.ts';
export * from './turnTypes.ts';
export * from './turnState.ts';
export * from './toolCalls.ts';
export * from './decideTurn.ts';
export * from './turnMachine.ts';
