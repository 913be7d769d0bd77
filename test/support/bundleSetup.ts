/**
 * vitest's global setup: builds waiter's and homed's bundles from the sources as they are, once
 * before any test, so every test that spawns bin/waiter.js or bin/homed.js runs what a user runs
 * after `npm install` (the bundle), never a bundle older than the sources, and a bundle that
 * could not be built fails the run instead of quietly leaving a program on tsx.
 */
import { buildAll } from '../../bin/build-bundles.js';

export default async function setup(): Promise<void> {
  await buildAll();
}
