#!/usr/bin/env node
// Starts from the bundle (plain JavaScript, about a tenth of tsx's start) when it was built from the
// sources as they are now; otherwise runs the sources through tsx, as homed does (see waiterBundle.js).
import { freshBundle } from './waiterBundle.js';

const bundle = await freshBundle();
if (bundle !== undefined) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/waiter.ts');
}
