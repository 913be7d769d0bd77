/** The `files` built-in plugin and its path confinement. */
export { filesPlugin, filesManifest, resolveRoots, ROOTS_SETTING } from './filesPlugin.ts';
export { confinePath, isInside, realpathDeep, type ConfinedPath } from './confinePath.ts';
export {
  FileOperationFailed,
  InvalidFilesArgument,
  InvalidFilesRoots,
  NotARegularFile,
  PathChangedWhileOpening,
  PathOutsideRoots,
} from './errors.ts';
export { MAX_READ_BYTES } from './readText.ts';
