/**
 * The LoCoMo runners' command line: the options read (or the help shown), the run, and what it
 * reports on stdout. Bad input is said in one line, with where the help is, and exits 2; data that cannot be used is
 * said and exits 1; anything else is a bug and is thrown.
 */
import { UsageError } from '../options.ts';
import { isLocomoDataError } from './locomoData.ts';

export const runLocomoCli = async <O extends Readonly<{ help: boolean }>>(
  name: string,
  help: string,
  parse: (argv: string[]) => O,
  run: (options: O) => Promise<string>,
): Promise<number> => {
  // Node 20 ends a run whose awaits wait on nothing alive with exit 13 and says nothing: say it.
  const unfinished = (): void => {
    if (process.exitCode === 13)
      process.stderr.write(`${name}: ended before finishing: it waited on something that keeps nothing alive (a bug)\n`);
  };
  process.once('exit', unfinished);
  try {
    const options = parse(process.argv.slice(2));
    if (options.help) {
      process.stdout.write(help);
      return 0;
    }
    process.stdout.write(await run(options));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`${name}: ${error.message}\n(npm run ${name} -- --help lists the options)\n`);
      return 2;
    }
    if (isLocomoDataError(error)) {
      process.stderr.write(`${name}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
};
