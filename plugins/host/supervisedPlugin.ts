/**
 * One plugin under its supervisor machine, journaled: every message the supervisor takes
 * (start, stop, process ready/exited, and the firings of its backoff and stable-uptime timers)
 * is appended before it is processed, so `homed replay --verify` re-decides every restart.
 * Effects follow from the state the machine is in after each message: `starting` with no
 * instance spawns one, `stopping` stops it, `backoff` and `running` arm the timer whose firing
 * comes back as a journaled message.
 */
import type { Clock, EventStore, Timers } from '../../events/index.ts';
import {
  pluginSupervisorMachine,
  RESTART_DUE_EVENT,
  STABLE_UPTIME_EVENT,
  type PluginSupervisorConfig,
  type PluginSupervisorMessage,
} from '../../actors/index.ts';
import { crashReason, inertClock, JournaledActor, type Fact, type TimedMessage } from '../../actors/index.ts';
import type { PluginHub } from './pluginHub.ts';
import type { PluginStarter, RunningInstance } from './pluginStarters.ts';
import { PluginStartRefused } from './startErrors.ts';

export type SupervisedPluginOptions = Readonly<{
  name: string;
  stream: string;
  store: EventStore;
  clock: Clock;
  hub: PluginHub;
  start: PluginStarter;
  enabled: boolean;
  config?: Partial<PluginSupervisorConfig>;
  timers: Timers;
  log: (line: string) => void;
  /** Journaling broke: the daemon must stop. */
  fail: (error: unknown) => void;
  inspect?: ConstructorParameters<typeof JournaledActor>[0]['inspect'];
}>;

type StateName = 'stopped' | 'starting' | 'running' | 'crashed' | 'backoff' | 'gaveUp' | 'stopping';

/** What homed's output says of a crash, a restart and giving up (each journaled first), so a plugin crash-looping is seen. */
const supervisorNote = (name: string, fact: Fact): string | undefined => {
  const data = fact.data as Record<string, unknown>;
  switch (fact.type) {
    case 'PluginCrashed':
      return `plugin ${name}: crashed (${crashReason(fact.data as Parameters<typeof crashReason>[0])})`;
    case 'PluginRestarting':
      return `plugin ${name}: restarting in ${Number(data.delayMs) / 1000} s (attempt ${String(data.attempt)})`;
    case 'PluginGaveUp':
      return (
        `plugin ${name}: gave up after ${String(data.crashes)} crashes; ` +
        `'homed plugins start ${name}' tries again, 'homed log --type PluginCrashed' says why each ended`
      );
    default:
      return undefined;
  }
};

export class SupervisedPlugin {
  private readonly actor: JournaledActor<typeof pluginSupervisorMachine>;
  private instance: RunningInstance | undefined;
  /** Set while a start is under way; aborted when the supervisor is told to stop before the plugin is up. */
  private launchStop: AbortController | undefined;
  private timer: unknown;
  private settledListeners = new Set<() => void>();

  constructor(private readonly options: SupervisedPluginOptions) {
    this.actor = new JournaledActor({
      store: options.store,
      stream: options.stream,
      logic: pluginSupervisorMachine,
      input: { plugin: options.name, enabled: options.enabled, ...(options.config ? { config: options.config } : {}) },
      clock: inertClock,
      ...(options.inspect ? { inspect: options.inspect } : {}),
      onFacts: (facts) => this.afterFacts(facts),
    });
  }

  get state(): StateName {
    return this.actor.snapshot.value as StateName;
  }

  get pid(): number | undefined {
    return this.instance?.pid;
  }

  send(type: 'START' | 'STOP' | 'ENABLE' | 'DISABLE'): Promise<readonly Fact[]> {
    return this.deliver({ type, at: this.options.clock.now() });
  }

  /** Resolves once the plugin is in `state` (or now, if it is). */
  async until(predicate: (state: StateName) => boolean): Promise<void> {
    while (!predicate(this.state)) await new Promise<void>((resolve) => this.settledListeners.add(resolve));
  }

  /** Stops the plugin (if running) and resolves when it has left. */
  async shutdown(): Promise<void> {
    this.disarm();
    if (this.state === 'running' || this.state === 'starting' || this.state === 'backoff') await this.send('STOP');
    await this.until((s) => s !== 'stopping' && s !== 'starting');
    this.disarm();
    this.actor.stop();
  }

  private deliver(message: PluginSupervisorMessage | TimedMessage): Promise<readonly Fact[]> {
    // A crash's error may quote what the plugin wrote: it is journaled with secret values as aliases.
    return this.actor.deliver(this.options.hub.scrub(message)).catch((error: unknown) => {
      this.options.fail(error);
      throw error;
    });
  }

  private afterFacts(facts: readonly Fact[]): void {
    for (const fact of facts) {
      this.options.hub.observe(fact);
      const said = supervisorNote(this.options.name, fact);
      if (said) this.options.log(said);
    }
    this.reconcile();
    for (const listener of [...this.settledListeners]) {
      this.settledListeners.delete(listener);
      listener();
    }
  }

  private reconcile(): void {
    const context = this.actor.snapshot.context;
    this.disarm();
    switch (this.state) {
      case 'starting':
        if (!this.instance && !this.launchStop) this.launch();
        return;
      case 'stopping':
        if (this.instance)
          void this.instance
            .stop()
            .catch((error: unknown) => this.options.log(`plugin ${this.options.name}: stop failed: ${(error as Error).message}`));
        // Still starting (a subprocess that has not greeted yet): its start is cut short.
        else this.launchStop?.abort();
        return;
      case 'backoff':
        this.arm(RESTART_DUE_EVENT, (context.restartAt ?? context.now) - this.options.clock.now());
        return;
      case 'running':
        if (context.crashTimes.length > 0 && context.runningSince !== null) {
          this.arm(STABLE_UPTIME_EVENT, context.runningSince + context.config.stableUptimeMs - this.options.clock.now());
        }
        return;
      default:
        return;
    }
  }

  private launch(): void {
    const { name, hub } = this.options;
    const launchStop = new AbortController();
    this.launchStop = launchStop;
    this.options.start(hub, launchStop.signal).then(
      (instance) => {
        this.launchStop = undefined;
        this.instance = instance;
        instance.exited.then(async (exit) => {
          this.instance = undefined;
          const how = exit.signal ? `the process ended by signal ${exit.signal}` : `the process exited with code ${exit.exitCode}`;
          await hub.detach(name, exit.error ?? how).catch((error: unknown) => this.options.fail(error));
          if (exit.error) this.options.log(`plugin ${name}: ${exit.error}`);
          const at = this.options.clock.now();
          // An exit the kernel caused for the plugin's fault is a crash with its reason.
          const message: PluginSupervisorMessage = exit.error
            ? { type: 'PROCESS_CRASHED', at, error: exit.error, exitCode: exit.exitCode, signal: exit.signal }
            : { type: 'PROCESS_EXITED', at, exitCode: exit.exitCode, signal: exit.signal };
          await this.deliver(message).catch(() => undefined);
        });
        // Told to stop while it was starting: nothing else would stop it now that it is up.
        if (this.state === 'stopping') this.reconcile();
        else void this.deliver({ type: 'PROCESS_READY', at: this.options.clock.now() }).catch(() => undefined);
      },
      async (error: unknown) => {
        this.launchStop = undefined;
        const at = this.options.clock.now();
        if (launchStop.signal.aborted) {
          // Stopped before it was ready: not a crash, and nothing to fix.
          await hub.detach(name, 'stopped while starting').catch((e: unknown) => this.options.fail(e));
          this.options.log(`plugin ${name}: stopped while starting`);
          await this.deliver({ type: 'PROCESS_EXITED', at, exitCode: null, signal: 'SIGKILL' }).catch(() => undefined);
          return;
        }
        await hub.detach(name, 'the start failed').catch((e: unknown) => this.options.fail(e));
        const message = (error as Error).message;
        this.options.log(`plugin ${name}: start failed: ${message}`);
        // A start no retry can fix is not a crash: the plugin is stopped with what to fix.
        await this.deliver(
          error instanceof PluginStartRefused
            ? { type: 'START_REFUSED', at, error: message }
            : { type: 'PROCESS_CRASHED', at, error: message },
        ).catch(() => undefined);
      },
    );
  }

  private arm(type: string, inMs: number): void {
    this.timer = this.options.timers.setTimer(
      () => {
        this.timer = undefined;
        void this.deliver({ type, at: this.options.clock.now() }).catch(() => undefined);
      },
      Math.max(0, inMs),
    );
  }

  private disarm(): void {
    if (this.timer !== undefined) this.options.timers.clearTimer(this.timer);
    this.timer = undefined;
  }
}
