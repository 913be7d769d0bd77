/** The running kernel: facilities, modules, assembly, and the replay of its boots. */
export * from './facilities.ts';
export * from './kernelModule.ts';
export * from './facilityRegistry.ts';
export * from './kernelErrors.ts';
export * from './startKernel.ts';
export * from './replayKernel.ts';
