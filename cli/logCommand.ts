/**
 * `homed log`: prints events as JSON lines, filtered by stream, type and sequence range. A
 * stream or type that does not exist is refused with the closest names, never an empty listing;
 * the listing waits for its reader (a huge log through `less` is not buffered whole).
 */
import type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
import { keepProcessAlive } from '../actors/clock/systemClock.ts';
import { createDefaultCatalog, type HologramEventType, type ReadAllOptions } from '../events/index.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { closestNames } from '../events/index.ts';
import type { CommandOutput } from './commandOutput.ts';
import { dataDirFrom, existingLogPath, openEventLog } from './dataDir.ts';
import { toJsonLine } from './jsonLines.ts';
import { listStreams, unknownStream } from './logStreams.ts';

export const LOG_HELP = `Usage: homed log [--data DIR] [--stream S] [--type T]... [--from SEQ] [--to SEQ] [--limit N] [--raw] [--follow]
       homed log [--data DIR] --list-types | --list-streams

Prints the events of a data dir's log as JSON lines, oldest first.
  --stream S      only events of stream S (e.g. kernel)
  --type T        only events of type T; repeat for several types
  --from SEQ      first global sequence number to print (inclusive)
  --to SEQ        last global sequence number to print (inclusive)
  --limit N       print at most N events
  --raw           print rows as stored (payload as base64, type not checked): for damaged logs
  --follow        keep printing new events as they are appended (Ctrl-C to stop)
  --list-types    print every event type this build declares, one per line
  --list-streams  print every stream of the log with its event count and latest type
A --stream or --type that the log or this build does not have is refused with the closest
names (with --follow, a stream that has no events yet is waited for, with a note on stderr).
`;

const PAGE = 1_000;

/** `--type` names checked against the catalog: a typo is an error naming the nearest types, not an empty listing. */
const declaredTypes = (names: readonly string[]): HologramEventType[] => {
  const catalog = createDefaultCatalog();
  for (const name of names) {
    if (catalog.has(name)) continue;
    const near = closestNames(name, catalog.types());
    throw new UsageError(
      `--type ${name}: no event type of that name is declared${near.length > 0 ? `; did you mean ${near.slice(0, 5).join(', ')}?` : ''} (every type: homed log --list-types)`,
    );
  }
  return names as HologramEventType[];
};

export const logCommand = async (args: string[], output: CommandOutput): Promise<number> => {
  const write = output.line;
  const { values } = parse(args, {
    data: { type: 'string' },
    stream: { type: 'string' },
    type: { type: 'string', multiple: true },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    raw: { type: 'boolean' },
    follow: { type: 'boolean' },
    'list-types': { type: 'boolean' },
    'list-streams': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    write(LOG_HELP);
    return 0;
  }
  if (values['list-types']) {
    for (const type of createDefaultCatalog().types()) write(type);
    return 0;
  }
  const from = positiveInteger('from', values.from) ?? 1;
  const to = positiveInteger('to', values.to);
  const limit = positiveInteger('limit', values.limit) ?? Infinity;
  if (to !== undefined && to < from) throw new UsageError(`--to ${to} is before --from ${from}`);
  if (values.follow && values.raw) throw new UsageError('--follow and --raw cannot be combined');
  if (values.follow && to !== undefined) throw new UsageError('--follow and --to cannot be combined');
  const types = values.type === undefined ? undefined : declaredTypes(values.type);
  const store = openEventLog(existingLogPath(dataDirFrom(values.data)));
  try {
    if (values['list-streams']) {
      for (const s of await listStreams(store)) write(`${s.stream}\t${s.version} events\tlast ${s.lastType}`);
      return 0;
    }
    if (values.stream !== undefined && (await store.streamVersion(values.stream)) === 0) {
      if (!values.follow) throw new UsageError(unknownStream(store, values.stream));
      process.stderr.write(`homed: ${unknownStream(store, values.stream)}; waiting for its first event\n`);
    }
    // With --follow, print up to the head seen now, then tail from exactly there.
    const until = values.follow ? await store.headSeq() : to;
    const filter: ReadAllOptions<HologramEventType> = {
      ...(values.stream !== undefined ? { stream: values.stream } : {}),
      ...(types !== undefined ? { types } : {}),
    };
    let printed = 0;
    let next = from;
    while (printed < limit) {
      const page = {
        ...filter,
        ...(until !== undefined ? { toSeq: until } : {}),
        fromSeq: next,
        maxCount: Math.min(PAGE, limit - printed),
      };
      const batch = values.raw ? await rawPage(store, page) : await readPageUpToDamage(store, page, write);
      for (const item of batch) write(toJsonLine(item));
      await output.drained();
      printed += batch.length;
      if (batch.length < page.maxCount) break;
      next = batch[batch.length - 1]!.seq + 1;
    }
    if (values.follow && printed < limit) await follow(store, until!, filter, output);
    return 0;
  } finally {
    await store.close();
  }
};

/** A page of events; when one cannot be read, prints those before it, then throws its error. */
const readPageUpToDamage = async (store: SqliteEventStore, page: ReadAllOptions<HologramEventType>, write: (line: string) => void) => {
  try {
    return await store.readAll(page);
  } catch (error) {
    let next = page.fromSeq ?? 1;
    for (;;) {
      const [event] = await store.readAll({ ...page, fromSeq: next, maxCount: 1 }); // throws at the damaged event
      if (!event) throw error;
      write(toJsonLine(event));
      next = event.seq + 1;
    }
  }
};

const rawPage = async (store: SqliteEventStore, options: ReadAllOptions) =>
  (await store.readAllRows(options)).map((row) => ({ ...row, data: { $bytes: Buffer.from(row.data).toString('base64') } }));

/** Prints new events until Ctrl-C, or until the reader goes away (the next write fails). */
const follow = (store: SqliteEventStore, afterSeq: number, filter: ReadAllOptions, output: CommandOutput) =>
  new Promise<void>((resolve, reject) => {
    const release = keepProcessAlive();
    let ended = false;
    const end = (error?: unknown) => {
      if (ended) return;
      ended = true;
      release();
      process.off('SIGINT', onSigint);
      void subscription.stop().then(() => (error === undefined ? resolve() : reject(error)));
    };
    const onSigint = () => end();
    const subscription = store.subscribe({
      afterSeq,
      handler: (events) => {
        try {
          for (const event of events) {
            if (filter.stream !== undefined && event.stream !== filter.stream) continue;
            if (filter.types !== undefined && !filter.types.includes(event.type)) continue;
            output.line(toJsonLine(event));
          }
        } catch (error) {
          end(error); // the output failed: nobody reads any more
        }
      },
      onError: end,
    });
    output.failed().catch(end);
    process.once('SIGINT', onSigint);
  });
