/**
 * The `limits` of a Lua plugin's manifest: `{"memory_mb": 64, "instructions": 2000000,
 * "time_ms": 5000}`, the memory ceiling of its VM, the instruction budget and the wall-clock
 * limit of each call. Every problem is reported
 * with what a valid value looks like; nothing out of range is silently clamped.
 */
import type { LuaLimits } from '../sdk/manifestTypes.ts';

const RANGES = {
  memory_mb: { min: 1, max: 4096, example: 64 },
  instructions: { min: 1000, max: 1_000_000_000, example: 2_000_000 },
  time_ms: { min: 10, max: 600_000, example: 5_000 },
} as const;
const KEYS = Object.keys(RANGES) as (keyof typeof RANGES)[];

/** The limits, or undefined when absent; pushes each problem found (and then returns undefined). */
export const parseLuaLimits = (raw: unknown, isLua: boolean, problems: string[]): LuaLimits | undefined => {
  if (raw === undefined) return undefined;
  if (!isLua) {
    problems.push('"limits" applies to Lua plugins only (an entry ending in .lua); a subprocess plugin is its own process: remove it');
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push('"limits" must be an object like {"memory_mb": 64, "instructions": 2000000}');
    return undefined;
  }
  const found = problems.length;
  const limits: { -readonly [K in keyof LuaLimits]: LuaLimits[K] } = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(KEYS as string[]).includes(key)) {
      problems.push(`"limits" has an unknown key "${key}"; known keys: ${KEYS.join(', ')}`);
      continue;
    }
    const { min, max, example } = RANGES[key as keyof typeof RANGES];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      problems.push(`"limits.${key}" must be a whole number from ${min} to ${max} (e.g. ${example}), not ${JSON.stringify(value)}`);
      continue;
    }
    limits[key as keyof typeof RANGES] = value;
  }
  return problems.length > found ? undefined : limits;
};
