/** `homed log`: prints events as JSON lines, filtered by stream, type and sequence range. */
import type { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import type { ReadAllOptions } from '../../events/index.ts';
import { parse, positiveInteger } from './args.ts';
import { UsageError } from './cliErrors.ts';
import { defaultDataDir, existingLogPath, openEventLog } from './dataDir.ts';
import { toJsonLine } from './jsonLines.ts';

export const LOG_HELP = `Usage: homed log [--data DIR] [--stream S] [--type T]... [--from SEQ] [--to SEQ] [--limit N] [--raw] [--follow]

Prints the events of a data dir's log as JSON lines, oldest first.
  --stream S   only events of stream S (e.g. kernel)
  --type T     only events of type T; repeat for several types
  --from SEQ   first global sequence number to print (inclusive)
  --to SEQ     last global sequence number to print (inclusive)
  --limit N    print at most N events
  --raw        print rows as stored (payload as base64, type not checked): for damaged logs
  --follow     keep printing new events as they are appended (Ctrl-C to stop)
`;

const PAGE = 1_000;

export const logCommand = async (args: string[], write: (line: string) => void): Promise<number> => {
  const { values } = parse(args, {
    data: { type: 'string' },
    stream: { type: 'string' },
    type: { type: 'string', multiple: true },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    raw: { type: 'boolean' },
    follow: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    write(LOG_HELP);
    return 0;
  }
  const from = positiveInteger('from', values.from) ?? 1;
  const to = positiveInteger('to', values.to);
  const limit = positiveInteger('limit', values.limit) ?? Infinity;
  if (to !== undefined && to < from) throw new UsageError(`--to ${to} is before --from ${from}`);
  if (values.follow && values.raw) throw new UsageError('--follow and --raw cannot be combined');
  if (values.follow && to !== undefined) throw new UsageError('--follow and --to cannot be combined');
  const store = openEventLog(existingLogPath(values.data ?? defaultDataDir()));
  try {
    // With --follow, print up to the head seen now, then tail from exactly there.
    const until = values.follow ? await store.headSeq() : to;
    const filter: ReadAllOptions = {
      ...(values.stream !== undefined ? { stream: values.stream } : {}),
      ...(values.type !== undefined ? { types: values.type } : {}),
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
      printed += batch.length;
      if (batch.length < page.maxCount) break;
      next = batch[batch.length - 1]!.seq + 1;
    }
    if (values.follow && printed < limit) await follow(store, until!, filter, write);
    return 0;
  } finally {
    await store.close();
  }
};

/** A page of events; when one cannot be read, prints those before it, then throws its error. */
const readPageUpToDamage = async (store: SqliteEventStore, page: ReadAllOptions, write: (line: string) => void) => {
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

const follow = (store: SqliteEventStore, afterSeq: number, filter: ReadAllOptions, write: (line: string) => void) =>
  new Promise<void>((resolve, reject) => {
    const subscription = store.subscribe({
      afterSeq,
      handler: (events) => {
        for (const event of events) {
          if (filter.stream !== undefined && event.stream !== filter.stream) continue;
          if (filter.types !== undefined && !filter.types.includes(event.type)) continue;
          write(toJsonLine(event));
        }
      },
      onError: reject,
    });
    const keepAlive = setInterval(() => undefined, 1 << 30);
    process.once('SIGINT', () => {
      clearInterval(keepAlive);
      void subscription.stop().then(resolve);
    });
  });
