/**
 * `node --import <this file> …`: records the URL of every ES module the process resolves (its
 * entry point, what that imports, a loader such as tsx and what tsx resolves) in the file
 * named by $HOLOGRAM_TRACE_MODULES, one per line. How a test sees which code a command ran.
 */
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url, { data: { file: process.env.HOLOGRAM_TRACE_MODULES } });
