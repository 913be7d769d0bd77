/** Creates an empty file readable and writable by its owner only (0600), unless it exists. Never opens an existing file. */
import { closeSync, existsSync, openSync } from 'node:fs';

export const createPrivateFile = (path: string): void => {
  if (existsSync(path)) return;
  try {
    closeSync(openSync(path, 'wx', 0o600)); // 'wx': a file that appeared meanwhile is left alone
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
};
