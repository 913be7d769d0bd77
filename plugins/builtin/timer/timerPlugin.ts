/**
 * The `timer` built-in plugin: timer_set / timer_list / timer_cancel, and an L3 interrupt when a
 * timer the person set is due (L1 for anyone else's). Promises: every change is on disk (atomically) before the tool answers, so a
 * timer survives a restart; a timer fires at least once (it is forgotten only after its
 * interrupt was accepted); one that came due while the daemon was down fires on start, marked
 * 'fired late'. Time comes from `env.clock`, waits from `env.timers`.
 */
import { join } from 'node:path';
import { pluginStateDir, type BuiltinPlugin } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import type { ToolCallInfo } from '../../sdk/pluginApi.ts';
import { InvalidTimerArgument, TimerStoreUnwritable, TooManyTimers, UnknownTimer } from './errors.ts';
import { describeDuration, MAX_TIMER_MS, parseTimerRequest } from './timerArgs.ts';
import { loadTimers, moveLegacyStore, saveTimers, TIMERS_FILE, type StoredTimer } from './timerStore.ts';
import { replyOrRefuse } from '../shared/replyOrRefuse.ts';
import { isOwnerOrInternal } from '../../../actors/index.ts';

/** Timers from before principals were recorded were the person's. */
const isGuest = (principal: string | undefined): principal is string => principal !== undefined && !isOwnerOrInternal(principal);

/** Whether a call may see and cancel `timer`: the owner's may touch any; a guest's only those set in its conversation as it. */
const mayTouch = (timer: StoredTimer, call: ToolCallInfo): boolean =>
  !isGuest(call.principal) || (timer.principal === call.principal && timer.route?.conversation === call.conversation);

export const timerManifest: PluginManifest = {
  name: 'timer',
  version: '0.1.0',
  entry: 'builtin:timer',
  kind: 'builtin',
  platforms: [],
  requires_facilities: [],
  capabilities: ['tools', 'interrupt'],
  auto_start: true,
  auto_restart: true,
  description: 'Timers the model sets; each raises an L3 interrupt when due, across restarts.',
};

/** The interrupt level of a due timer the person (or the kernel) set ("L3 Interactive: timer expiry"). */
export const TIMER_INTERRUPT_LEVEL = 3;
/**
 * A timer set in a turn of anyone else (a plugin's input, a guest's profile) fires in the
 * background, and each of them holds at most GUEST_TIMERS: what a plugin's text asks of the model
 * must not come back as interrupts that outrank the person, nor crowd out the person's timers.
 */
export const GUEST_TIMER_LEVEL = 1;
export const GUEST_TIMERS = 32;
/** The longest single wait: longer ones are re-armed, which also re-reads the clock after a suspend. */
const MAX_WAIT_MS = 60 * 60 * 1000;
/** The wait before raising again an interrupt the kernel did not accept. */
const RETRY_MS = 30_000;
export const MAX_TIMERS = 1000;

const iso = (ms: number): string => new Date(ms).toISOString();

export const timerPlugin: BuiltinPlugin = {
  manifest: timerManifest,
  async start(api, env) {
    const path = join(pluginStateDir(env.dataDir, 'timer'), TIMERS_FILE);
    await moveLegacyStore(join(env.dataDir, 'plugins', 'timer', TIMERS_FILE), path);
    const loaded = await loadTimers(path);
    let nextId = loaded.nextId;
    const timers = new Map<string, StoredTimer>(loaded.timers.map((timer) => [timer.id, timer]));
    const handles = new Map<string, unknown>();
    const inFlight = new Set<Promise<void>>();
    let writes: Promise<void> = Promise.resolve();
    let stopped = false;

    /** Saves the current state after any save already under way. */
    const persist = (): Promise<void> => {
      const write = writes.catch(() => undefined).then(() => saveTimers(path, { nextId, timers: [...timers.values()] }));
      writes = write;
      return write;
    };

    const disarm = (id: string): void => {
      if (handles.has(id)) env.timers.clearTimer(handles.get(id));
      handles.delete(id);
    };

    const armIn = (id: string, ms: number, late: boolean): void => {
      disarm(id);
      if (!stopped)
        handles.set(
          id,
          env.timers.setTimer(() => fire(id, late), ms),
        );
    };

    const arm = (timer: StoredTimer): void => armIn(timer.id, Math.min(MAX_WAIT_MS, Math.max(0, timer.dueAt - env.clock.now())), false);

    const fire = (id: string, late: boolean): void => {
      handles.delete(id);
      const timer = timers.get(id);
      if (timer === undefined || stopped) return;
      const now = env.clock.now();
      if (!late && now < timer.dueAt) return arm(timer); // a split wait, or the clock is behind the timers
      const text = late
        ? `Timer ${id} fired late: ${timer.note} (it was due ${iso(timer.dueAt)}, ${describeDuration(now - timer.dueAt)} ago, while the daemon was down)`
        : `Timer ${id} fired: ${timer.note}`;
      const job = api
        .injectInterrupt(
          { text, ...timer.route, ...(timer.principal ? { principal: timer.principal } : {}) },
          isGuest(timer.principal) ? GUEST_TIMER_LEVEL : TIMER_INTERRUPT_LEVEL,
        )
        .then(
          () => {
            timers.delete(id);
            return persist();
          },
          (error: unknown) => {
            api.log(`timer: the interrupt of ${id} was not accepted (${String(error)}); trying again in ${RETRY_MS / 1000} s`);
            armIn(id, RETRY_MS, late);
          },
        )
        .catch((error: unknown) =>
          api.log(`timer: ${id} fired but the store could not be saved (${String(error)}); it may fire again after a restart`),
        )
        .finally(() => inFlight.delete(job));
      inFlight.add(job);
    };

    await api.registerTool(
      {
        name: 'timer_set',
        description:
          'Set a timer: after `seconds`, or at the ISO time `at` (with a timezone). When it is due you get an interrupt ' +
          "'Timer <id> fired: <note>'. Timers survive restarts. Returns the id and due time.",
        parameters: {
          type: 'object',
          properties: {
            seconds: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TIMER_MS / 1000, description: 'Delay from now.' },
            at: { type: 'string', description: 'Due time, ISO 8601 with timezone, e.g. 2030-01-31T09:00:00Z.' },
            note: { type: 'string', description: 'What the timer is for; it comes back when it fires.' },
          },
          required: ['note'],
        },
      },
      (args, call) =>
        replyOrRefuse(async () => {
          const now = env.clock.now();
          const { dueAt, note } = parseTimerRequest(args, now);
          if (timers.size >= MAX_TIMERS) throw new TooManyTimers(MAX_TIMERS);
          if (isGuest(call.principal) && [...timers.values()].filter((t) => t.principal === call.principal).length >= GUEST_TIMERS) {
            throw new TooManyTimers(GUEST_TIMERS, call.principal);
          }
          // It answers, later, where the turn that set it answered.
          const route = call.conversation
            ? { conversation: call.conversation, ...(call.replyTo ? { replyTo: call.replyTo } : {}) }
            : undefined;
          const timer: StoredTimer = {
            id: `t${nextId}`,
            dueAt,
            setAt: now,
            note,
            ...(route ? { route } : {}),
            ...(call.principal ? { principal: call.principal } : {}),
          };
          nextId += 1;
          timers.set(timer.id, timer);
          try {
            await persist();
          } catch (error) {
            timers.delete(timer.id);
            throw new TimerStoreUnwritable(path, 'set', error);
          }
          arm(timer);
          return `Timer ${timer.id} set: due ${iso(dueAt)} (in ${describeDuration(dueAt - now)}). Cancel it with timer_cancel {"id": "${timer.id}"}.`;
        }),
    );

    await api.registerTool(
      {
        name: 'timer_list',
        description: 'List the timers that are set, soonest first.',
        parameters: { type: 'object', properties: {} },
      },
      (_args, call) =>
        replyOrRefuse(() => {
          const seen = [...timers.values()].filter((t) => mayTouch(t, call));
          if (seen.length === 0) return 'No timers are set.';
          const now = env.clock.now();
          return seen
            .sort((a, b) => a.dueAt - b.dueAt || a.setAt - b.setAt)
            .map(
              (t) => `${t.id}  due ${iso(t.dueAt)} (${t.dueAt > now ? `in ${describeDuration(t.dueAt - now)}` : 'firing now'})  ${t.note}`,
            )
            .join('\n');
        }),
    );

    await api.registerTool(
      {
        name: 'timer_cancel',
        description: 'Cancel a timer by its id (as timer_set or timer_list gave it).',
        parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
      (args, call) =>
        replyOrRefuse(async () => {
          const id = args.id;
          if (typeof id !== 'string' || id === '')
            throw new InvalidTimerArgument('timer_cancel', 'id', '\'id\' must be a timer id string like "t1"');
          const timer = timers.get(id);
          // Another's timer is, to a guest, no timer at all: its being there is not the guest's to learn.
          if (timer === undefined || !mayTouch(timer, call)) throw new UnknownTimer(id);
          timers.delete(id);
          disarm(id);
          try {
            await persist();
          } catch (error) {
            timers.set(id, timer);
            arm(timer);
            throw new TimerStoreUnwritable(path, 'cancelled', error);
          }
          return `Timer ${id} cancelled (it was due ${iso(timer.dueAt)}: ${timer.note}).`;
        }),
    );

    // Re-arm what was stored. An overdue timer fires on a zero wait, so its interrupt comes
    // right after start() returned, when the host counts the plugin as running.
    const startedAt = env.clock.now();
    for (const timer of timers.values()) {
      if (timer.dueAt <= startedAt) armIn(timer.id, 0, true);
      else arm(timer);
    }
    if (timers.size > 0) api.log(`timer: re-armed ${timers.size} stored timer(s)`);

    return {
      async stop() {
        stopped = true;
        for (const id of [...handles.keys()]) disarm(id);
        await Promise.all([...inFlight]);
        await writes.catch(() => undefined);
      },
    };
  },
};
