/** Small helpers over node:util parseArgs that turn bad input into UsageError, said the way a person reads it. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestNames } from '../events/closestNames.ts';
import { wholeNumberOf } from '../events/wholeNumber.ts';
import { UsageError } from './cliErrors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs' complaint in one line: an unknown option with the closest known one, a missing value with how to give one. */
const explain = (error: Error & { code?: string }, args: readonly string[], options: Options, allowPositionals: boolean): string => {
  const quoted = /'([^']+)'/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) {
    const [near] = closestNames(quoted.replace(/^-+/, ''), Object.keys(options), 1);
    if (near !== undefined) return `unknown option ${quoted}; did you mean --${near}?`;
    // A command that takes words (a message) may have been given one that starts with '-'.
    const word = allowPositionals && !quoted.startsWith('--');
    return `unknown option ${quoted}${word ? `; words that start with '-' go after --: -- "${quoted} …"` : ''}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && quoted) {
    return `unexpected argument '${quoted}': this command takes only options (see its --help)`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted) {
    const option = quoted.split(' ')[0]!;
    const at = args.indexOf(option);
    const next = at < 0 ? undefined : args[at + 1];
    return next?.startsWith('-')
      ? `${option} needs a value, and '${next}' after it is read as an option; if it is the value, write ${option}=${next}`
      : `${option} needs a value`;
  }
  return error.message.split('\n')[0]!;
};

export const parse = <O extends Options>(args: string[], options: O, allowPositionals = false) => {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(explain(error as Error & { code?: string }, args, options, allowPositionals));
  }
};

export const positiveInteger = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = wholeNumberOf(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${name} must be a whole number ≥ 0, got '${value}'`);
  return n;
};
