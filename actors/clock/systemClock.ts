/** The real clock and id source: the only place the running system reads the wall clock. */
import { randomUUID } from 'node:crypto';
import type { Clock, IdSource } from '../../events/index.ts';

export const systemClock: Clock = { now: () => Date.now() };

export const randomIds: IdSource = { next: () => randomUUID() };
