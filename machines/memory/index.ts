/** Pure memory rules: the pipeline's rule distiller, entity merge proposals, and scenes. */
export * from './chineseNumerals.ts';
export * from './sentences.ts';
export * from './factPatterns.ts';
export * from './ruleDistiller.ts';
export * from './mergeProposals.ts';
export * from './sceneFingerprint.ts';
export * from './sceneLifecycle.ts';
export * from './contextPruning.ts';
export * from './heartbeatMachine.ts';
export * from './memoryDecisions.ts';
