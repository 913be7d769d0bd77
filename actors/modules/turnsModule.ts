/**
 * Runs the agent's turns inside the daemon: each task the scheduler starts becomes a turn with
 * the plugins' tools and stage handlers, asking the `llm` facility. Settings: `llm.systemPrompt`
 * (the persona; else the data dir's `persona.md`; else the default one), `llm.maxRounds`,
 * `timeZone` (IANA, for the timeline layer; default the machine's). Without a model source the
 * daemon still runs, and each input is answered with a failure saying what to configure.
 */
import type { SecurityPolicy } from '../../machines/security/index.ts';
import { join } from 'node:path';
import { TURN_STREAM_PREFIX } from '../../events/index.ts';
import { openStreams } from '../../projections/index.ts';
import { Facility, INSPECT_FACILITY } from '../kernel/facilities.ts';
import type { KernelModule } from '../kernel/kernelModule.ts';
import { turnMemoryOf } from '../memory/turnMemory.ts';
import { SqliteReadModelTx } from '../projections/sqliteReadModelTx.ts';
import { TurnRunner } from '../turn/turnRunner.ts';
import { readPlacedFile } from '../../adapters/files/privateFiles.ts';
import { InvalidSettings, setting } from './config.ts';

/** The persona a user writes in the data dir, when settings.json has no llm.systemPrompt. */
export const PERSONA_FILE = 'persona.md';

/** The persona file's text, if there is one; one that is not a regular file (a FIFO would hang the start) is refused. */
const readPersona = (path: string): string | undefined =>
  readPlacedFile(path, (why) => new InvalidSettings(`${why}; make it a text file of the persona, or remove it`))
    ?.toString('utf8')
    .trim() || undefined;

export const turnsModule = (): KernelModule => {
  let runner: TurnRunner | undefined;
  return {
    name: 'turns',
    requires: [
      Facility.eventLog,
      Facility.config,
      Facility.dataDir,
      Facility.clock,
      Facility.timers,
      Facility.ids,
      Facility.projections,
      Facility.scheduler,
      Facility.plugins,
      Facility.memory,
      Facility.llm,
      Facility.output,
      Facility.security,
    ],
    provides: [Facility.turns],
    async init(context) {
      const settings = context.require(Facility.config);
      const store = context.require(Facility.eventLog);
      const personaFile = join(context.require(Facility.dataDir), PERSONA_FILE);
      const persona = setting<string | undefined>(settings, 'llm.systemPrompt', undefined) ?? readPersona(personaFile);
      const timeZone = setting<string>(settings, 'timeZone', Intl.DateTimeFormat().resolvedOptions().timeZone);
      const maxRounds = setting<number | undefined>(settings, 'llm.maxRounds', undefined);
      const policy = setting<SecurityPolicy>(settings, 'security', {});
      const projections = context.require(Facility.projections);
      const inspect = context.optional(INSPECT_FACILITY);
      runner = new TurnRunner({
        store,
        scheduler: context.require(Facility.scheduler),
        plugins: context.require(Facility.plugins).turns,
        llm: context.require(Facility.llm),
        ...(persona ? { persona } : {}),
        timeZone,
        policy,
        profileOf: (principal) => context.require(Facility.plugins).profileOf(principal),
        profiles: () => context.require(Facility.plugins).profiles(),
        ...(maxRounds ? { maxRounds } : {}),
        log: (line) => context.log(line),
        memory: turnMemoryOf(context.require(Facility.memory), (text) => context.require(Facility.security).scrub(text)),
        clock: context.require(Facility.clock),
        timers: context.require(Facility.timers),
        ids: context.require(Facility.ids),
        ...(inspect ? { inspect } : {}),
        openTurns: async () => {
          await projections.subscription.caughtUp(await store.headSeq());
          return openStreams(new SqliteReadModelTx(store.db), TURN_STREAM_PREFIX, 'TurnCompleted');
        },
      });
      await runner.start();
      context.require(Facility.plugins).useApprovals(runner);
      context.provide(Facility.turns, runner);
    },
    async stop() {
      await runner?.stop();
    },
  };
};
