/** The stage pipeline: its vocabulary, the change check, the merge rules and one stage's run. */
export * from './stageTypes.ts';
export * from './checkChange.ts';
export * from './mergeChanges.ts';
export * from './handlerScope.ts';
export * from './stageInputError.ts';
export * from './finishStage.ts';
export * from './stageRun.ts';
