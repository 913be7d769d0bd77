#!/usr/bin/env node
// npm run bench:memory-scale: from its bundle when it was built from the sources as they are now
// (so the RSS it reports is the memory's, as homed runs it, not tsx's too); else through tsx.
import { startFromBundle } from './bundles.js';

await startFromBundle('memory-scale');
