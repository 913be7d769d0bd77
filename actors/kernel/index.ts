/** The running kernel: facilities, modules, and assembly. */
export * from './facilities.ts';
export * from './kernelModule.ts';
export * from './facilityRegistry.ts';
export * from './startKernel.ts';
