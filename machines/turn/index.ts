/** The turn: budget, prompt assembly and the tool registry (the turn machine comes next). */
export * from './tokenBudget.ts';
export * from './systemPrompt.ts';
export * from './toolRegistry.ts';
