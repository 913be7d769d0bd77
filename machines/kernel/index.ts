/** Kernel assembly: module declarations, layer planning, and the kernel's decider, fold and machine. */
export * from './moduleDeclaration.ts';
export * from './assemblyErrors.ts';
export * from './planLayers.ts';
export * from './kernelTypes.ts';
export * from './evolveKernel.ts';
export * from './kernelPhase.ts';
export * from './decideKernel.ts';
export * from './kernelMachine.ts';
