/**
 * homed's kernel in the test's process: the module list of cli/daemonModules.ts on a real
 * SQLite log in a data dir, with two swaps: the `llm` module provides a chain of one gated
 * provider the test answers, and the plugin host's built-ins include the probe plugin. Time
 * and ids are virtual and shared by every kernel of the run. It stops and starts kernels on
 * the same data dir, and "crashes" one (see `crash`).
 */
import { cpSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Facility, startKernel, type FacilityTypes, type KernelHandle, type KernelModule } from '../../actors/kernel/index.ts';
import { ProviderChain } from '../../actors/llm/providerChain.ts';
import { SqliteEventStore } from '../../adapters/sqlite/sqliteEventStore.ts';
import { daemonModules } from '../../cli/daemonModules.ts';
import { EVENT_LOG_FILE } from '../../cli/dataDir.ts';
import { createDefaultCatalog, SequentialIds } from '../../events/index.ts';
import { BUILTIN_PLUGINS, pluginsModule } from '../../plugins/host/pluginsModule.ts';
import { askOverCli, stopOverCli, type CliAsk } from './cliAsk.ts';
import { GatedProvider } from './gatedProvider.ts';
import { createProbePlugin, type ProbePlugin } from './probePlugin.ts';
import type { ReceivedReply } from './receivedReply.ts';
import { createVirtualTime, type VirtualTime } from './virtualTime.ts';

/** Provides `Facility.llm` as one chain over the gated provider. */
const gatedLlmModule = (provider: GatedProvider): KernelModule => ({
  name: 'llm',
  requires: [Facility.config],
  provides: [Facility.llm],
  init: (context) => context.provide(Facility.llm, { chain: new ProviderChain([provider]), model: 'm' }),
});

const swapModules = (modules: KernelModule[], swaps: Readonly<Record<string, KernelModule>>): KernelModule[] => {
  for (const name of Object.keys(swaps)) {
    if (!modules.some((m) => m.name === name)) throw new Error(`daemonModules() has no module '${name}' to swap for a test one`);
  }
  return modules.map((m) => swaps[m.name] ?? m);
};

export type InProcessDaemonOptions = Readonly<{
  /** An empty directory the data dir and crash copies go in. */
  root: string;
  /** Plugin folders to install in the data dir's plugins/ (symlinked). */
  plugins?: Readonly<Record<string, string>>;
  settings?: Readonly<Record<string, unknown>>;
  log?: (line: string) => void;
}>;

export class InProcessDaemon {
  readonly dataDir: string;
  readonly time: VirtualTime = createVirtualTime(Date.UTC(2026, 11, 1, 9));
  readonly gate = new GatedProvider();
  readonly probe: ProbePlugin = createProbePlugin();
  /** Every reply recorded by any receiver of the run, in the order their inputs were sent. */
  readonly replies: ReceivedReply[] = [];
  /** One line per boot, stop and crash, for a report. */
  readonly history: string[] = [];
  private readonly ids = new SequentialIds('id');
  private readonly eventIds = new SequentialIds('ev');
  private readonly sessions: CliAsk[] = [];
  private running: { store: SqliteEventStore; kernel: KernelHandle } | undefined;
  /** A crash whose copy is taken, while the dead kernel is stopped and the next one starts. */
  private recovering: Promise<void> | undefined;
  private crashes = 0;

  constructor(private readonly options: InProcessDaemonOptions) {
    this.dataDir = join(options.root, 'data');
    mkdirSync(join(this.dataDir, 'plugins'), { recursive: true });
    for (const [name, dir] of Object.entries(options.plugins ?? {})) symlinkSync(dir, join(this.dataDir, 'plugins', name));
    writeFileSync(join(this.dataDir, 'settings.json'), JSON.stringify(options.settings ?? {}));
  }

  get store(): SqliteEventStore {
    return this.live().store;
  }

  get kernel(): KernelHandle {
    return this.live().kernel;
  }

  facility<K extends keyof FacilityTypes>(name: K): FacilityTypes[K] {
    return this.kernel.facilities.get<FacilityTypes[K]>(name);
  }

  async boot(): Promise<void> {
    if (this.running) throw new Error('a kernel is already running on this data dir');
    const store = SqliteEventStore.open(join(this.dataDir, EVENT_LOG_FILE), {
      catalog: createDefaultCatalog(),
      clock: this.time.clock,
      ids: this.eventIds,
    });
    const modules = swapModules(daemonModules(), {
      llm: gatedLlmModule(this.gate),
      // No web UI: in-process daemons run side by side, and its port is one for all of them.
      plugins: pluginsModule([...BUILTIN_PLUGINS.filter((p) => p.manifest.name !== 'webui'), this.probe.plugin]),
    });
    const kernel = await startKernel({
      store,
      modules,
      given: {
        [Facility.eventLog]: store,
        [Facility.clock]: this.time.clock,
        [Facility.timers]: this.time.timers,
        [Facility.ids]: this.ids,
        [Facility.dataDir]: this.dataDir,
      },
      pid: process.pid,
      dataDir: this.dataDir,
      clock: this.time.clock,
      ids: this.ids,
      log: (line) => this.options.log?.(line),
    });
    this.running = { store, kernel };
    await kernel.ready;
    this.history.push(`boot at seq ${await store.headSeq()}`);
  }

  /** Stops the kernel as homed does on SIGINT, and closes the log. */
  async stop(): Promise<void> {
    await this.recovered();
    const { store, kernel } = this.live();
    const output = await kernel.stop('the test stops the daemon');
    await store.close();
    this.running = undefined;
    this.goneAway();
    if (output.failure) throw new Error(`the kernel stopped because module '${output.failure.module}' failed: ${output.failure.error}`);
    this.history.push('stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.boot();
  }

  /**
   * A crash, as SIGKILL leaves the data dir: the log is copied as committed at this moment
   * (`VACUUM INTO`, synchronous, so nothing commits in between) and, in the same tick, every
   * receiver loses the daemon and every call the gated provider and the probe hold is
   * forgotten. The dead kernel is then stopped (what it does after the copy is lost with its
   * log), the copy becomes the data dir's log, and a new kernel boots on it.
   */
  crash(): void {
    const copy = join(this.options.root, `crash-${++this.crashes}.db`);
    const { store, kernel } = this.live();
    store.db.exec(`VACUUM INTO '${copy.replaceAll("'", "''")}'`);
    this.goneAway();
    this.running = undefined;
    const { head } = store.db.prepare<[], { head: number }>('SELECT max(seq) AS head FROM events').get()!;
    this.history.push(`crashed (log copied at seq ${head})`);
    this.recovering = (async () => {
      await kernel.stop('killed');
      await store.close();
      const log = join(this.dataDir, EVENT_LOG_FILE);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${log}${suffix}`, { force: true });
      renameSync(copy, log);
      await this.boot();
    })().finally(() => (this.recovering = undefined));
  }

  /**
   * Arms a crash for the moment the log has at least `events` more committed events than now
   * (seen by a subscriber, so possibly a few more). `disarm` returns whether it fired.
   */
  async crashAfter(events: number): Promise<{ disarm(): Promise<boolean> }> {
    const store = this.store;
    const from = await store.headSeq();
    let fired = false;
    let armed = true;
    const subscription = store.subscribe({
      afterSeq: from,
      handler: (batch) => {
        if (!armed || batch.at(-1)!.seq < from + events) return;
        armed = false;
        fired = true;
        this.crash();
      },
    });
    return {
      disarm: async () => {
        armed = false;
        if (!fired) await subscription.stop();
        return fired;
      },
    };
  }

  /** Waits for a crash to be recovered from (a new kernel running). */
  async recovered(): Promise<void> {
    await this.recovering;
  }

  get isRunning(): boolean {
    return this.running !== undefined && this.recovering === undefined;
  }

  /** Sends a message over the cli socket; its reply is recorded. */
  async ask(text: string): Promise<ReceivedReply> {
    const session = await askOverCli(this.dataDir, text, 'tester');
    this.sessions.push(session);
    this.replies.push(session.reply);
    return session.reply;
  }

  /** Raises an L3 interrupt through the probe plugin; its reply is recorded. */
  async interrupt(text: string): Promise<ReceivedReply> {
    const reply = await this.probe.interrupt(text);
    this.replies.push(reply);
    return reply;
  }

  pressStop(): Promise<void> {
    return stopOverCli(this.dataDir);
  }

  /** The cli sessions still waiting for their reply's end. */
  get waitingSessions(): readonly CliAsk[] {
    return this.sessions.filter((s) => !s.reply.gone && !s.reply.end);
  }

  /** Hangs up every session, stops a kernel still running, and leaves the data dir as it is. */
  async dispose(): Promise<void> {
    await this.recovering?.catch(() => undefined);
    if (this.running) {
      await this.running.kernel.stop('the test is over').catch(() => undefined);
      await this.running.store.close();
      this.running = undefined;
    }
    this.goneAway();
  }

  /** Copies the data dir aside (for a failing run's report). */
  keepDataDir(to: string): void {
    cpSync(this.dataDir, to, { recursive: true });
  }

  /** The daemon is gone for everyone who was talking to it. */
  private goneAway(): void {
    for (const session of this.sessions.splice(0)) session.leave();
    this.probe.letGo();
    this.gate.forgetAll();
  }

  private live(): { store: SqliteEventStore; kernel: KernelHandle } {
    if (!this.running) throw new Error(this.recovering ? 'the kernel is recovering from a crash' : 'no kernel is running');
    return this.running;
  }
}
