/** Small helpers over node:util parseArgs that turn bad input into UsageError. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './cliErrors.ts';

export const parse = <O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, allowPositionals = false) => {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
};

export const positiveInteger = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number ≥ 0, got '${value}'`);
  return n;
};
