/** Kernel assembly: module declarations, layer planning, and the kernel machine. */
export * from './moduleDeclaration.ts';
export * from './assemblyErrors.ts';
export * from './planLayers.ts';
export * from './kernelMachine.ts';
