/**
 * The timers on disk: one JSON file, replaced atomically on every change, so after a crash it
 * holds either the state before a change or the state after it.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rmdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../shared/writeFileAtomic.ts';
import { TimerStoreCorrupt } from './errors.ts';

/** Where a timer's firing goes: the conversation and reply route of the turn that set it. */
export type TimerRoute = Readonly<{ conversation: string; replyTo?: Readonly<{ channel: string; target?: string }> }>;

/** `principal`: who set it; it fires as them (absent for timers set before principals: the kernel's own). */
export type StoredTimer = Readonly<{ id: string; dueAt: number; setAt: number; note: string; route?: TimerRoute; principal?: string }>;

const isRoute = (value: unknown): boolean => {
  if (value === undefined) return true;
  if (typeof value !== 'object' || value === null) return false;
  const { conversation, replyTo } = value as Record<string, unknown>;
  if (typeof conversation !== 'string') return false;
  if (replyTo === undefined) return true;
  const { channel, target } = (replyTo ?? {}) as Record<string, unknown>;
  return typeof channel === 'string' && (target === undefined || typeof target === 'string');
};

export type TimerState = Readonly<{
  /** The number the next timer's id takes (`t<n>`); never reused. */
  nextId: number;
  timers: readonly StoredTimer[];
}>;

export const TIMERS_FILE = 'timers.json';

/**
 * Builds before 2026-12 kept the store in `<dataDir>/plugins/timer/`, where the loader looks
 * for user plugins: it moves to the state dir once (and the emptied folder goes too).
 */
export const moveLegacyStore = async (legacy: string, path: string): Promise<void> => {
  if (!existsSync(legacy) || existsSync(path)) return;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await rename(legacy, path);
  await rmdir(dirname(legacy)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error; // not empty: something of the user's is there
  });
};

export const EMPTY_TIMER_STATE: TimerState = { nextId: 1, timers: [] };

const STORE_VERSION = 1;

const isTimer = (value: unknown): value is StoredTimer => {
  if (typeof value !== 'object' || value === null) return false;
  const { id, dueAt, setAt, note, route, principal } = value as Record<string, unknown>;
  return (
    typeof id === 'string' &&
    Number.isFinite(dueAt) &&
    Number.isFinite(setAt) &&
    typeof note === 'string' &&
    isRoute(route) &&
    (principal === undefined || (typeof principal === 'string' && principal !== ''))
  );
};

/** The stored state, or the empty one when there is no file yet. */
export const loadTimers = async (path: string): Promise<TimerState> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return EMPTY_TIMER_STATE;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TimerStoreCorrupt(path, 'is not valid JSON');
  }
  const { version, nextId, timers } = (parsed ?? {}) as Record<string, unknown>;
  if (version !== STORE_VERSION) throw new TimerStoreCorrupt(path, `has version ${JSON.stringify(version)}, not ${STORE_VERSION}`);
  if (typeof nextId !== 'number' || !Number.isInteger(nextId) || nextId < 1) throw new TimerStoreCorrupt(path, 'has no valid nextId');
  if (!Array.isArray(timers) || !timers.every(isTimer)) throw new TimerStoreCorrupt(path, 'has a malformed timers list');
  return { nextId, timers };
};

export const saveTimers = async (path: string, state: TimerState): Promise<void> => {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify({ version: STORE_VERSION, ...state }, null, 2)}\n`);
};
