#!/usr/bin/env node
// Starts from the bundle (plain JavaScript, about a tenth of tsx's start) when it was built from the
// sources as they are now; otherwise runs the sources through tsx (see bundles.js).
import { startFromBundle } from './bundles.js';

await startFromBundle('waiter');
