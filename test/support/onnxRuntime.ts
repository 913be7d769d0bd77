/**
 * Whether the optional onnxruntime-node package is installed here: tests of dense recall need
 * it (CI installs it), and say so when they are skipped without it.
 */
import { createRequire } from 'node:module';

const installed = (): boolean => {
  try {
    createRequire(import.meta.url).resolve('onnxruntime-node');
    return true;
  } catch {
    return false;
  }
};

export const ONNX_RUNTIME_INSTALLED = installed();

if (!ONNX_RUNTIME_INSTALLED) {
  console.warn('onnxruntime-node is not installed: the dense-recall tests are skipped (npm run install:onnx, then they run)');
}
