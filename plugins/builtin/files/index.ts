/** The `files` built-in plugin and its path confinement. */
export { filesPlugin, filesManifest, resolveRoots, ROOTS_SETTING } from './filesPlugin.ts';
export { confinePath, isInside, realpathDeep, type ConfinedPath } from './confinePath.ts';
export { FileOperationFailed, InvalidFilesArgument, InvalidFilesRoots, PathOutsideRoots } from './errors.ts';
