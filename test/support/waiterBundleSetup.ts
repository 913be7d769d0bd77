/**
 * vitest's global setup: builds waiter's bundle from the sources as they are, once before any
 * test, so every test that spawns bin/waiter.js runs what a user runs after `npm install` (the
 * bundle), never a bundle older than the sources, and a bundle that could not be built fails
 * the run instead of quietly leaving waiter on tsx.
 */
import { buildWaiter } from '../../bin/build-waiter.js';

export default async function setup(): Promise<void> {
  await buildWaiter();
}
