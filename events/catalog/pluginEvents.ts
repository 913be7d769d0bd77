/**
 * Plugins in the log. The supervisor of each plugin journals into `plugin-<name>:<boot>` (one
 * stream per daemon boot, so every boot's supervisor replays from a clean start); everything a
 * plugin does to the kernel — registrations, their detachment, injected inputs, protocol
 * complaints — goes to the one `plugins` stream, in the order it happened.
 */
import { defineEvent, typesOf, type EventUnion } from '../defineEvent.ts';
import {
  array,
  boolean,
  integer,
  literal,
  nonEmptyString,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  unknown,
} from '../schema.ts';
import { toolAccess } from './turnParts.ts';

export const PLUGIN_REGISTRY_STREAM = 'plugins';
export const PLUGIN_SUPERVISOR_STREAM_PREFIX = 'plugin-';

/** The supervisor stream of plugin `name` during the boot `boot`. */
export const pluginSupervisorStream = (name: string, boot: string): string => `${PLUGIN_SUPERVISOR_STREAM_PREFIX}${name}:${boot}`;

const plugin = () => nonEmptyString();
const at = () => number();

export const pluginEvents = {
  // Supervisor facts (machines/pluginSupervisor).
  PluginStarting: defineEvent('PluginStarting', object({ plugin: plugin(), attempt: integer(), at: at() })),
  PluginStarted: defineEvent('PluginStarted', object({ plugin: plugin(), at: at() })),
  PluginCrashed: defineEvent(
    'PluginCrashed',
    object({
      plugin: plugin(),
      exitCode: nullable(integer()),
      signal: nullable(string()),
      error: optional(string()),
      crashCount: integer(),
      at: at(),
    }),
  ),
  PluginRestarting: defineEvent('PluginRestarting', object({ plugin: plugin(), attempt: integer(), delayMs: integer(), at: at() })),
  PluginGaveUp: defineEvent('PluginGaveUp', object({ plugin: plugin(), crashes: integer(), firstCrashAt: number(), at: at() })),
  /** `refused`: the start failed in a way no retry fixes; `error` says what to fix. */
  PluginStopped: defineEvent(
    'PluginStopped',
    object({ plugin: plugin(), reason: literal('requested', 'disabled', 'crashed', 'refused'), error: optional(string()), at: at() }),
  ),
  PluginCrashHistoryCleared: defineEvent('PluginCrashHistoryCleared', object({ plugin: plugin(), forgotten: integer(), at: at() })),
  PluginEnabled: defineEvent('PluginEnabled', object({ plugin: plugin(), at: at() })),
  PluginDisabled: defineEvent('PluginDisabled', object({ plugin: plugin(), at: at() })),

  // What plugins do to the kernel (stream `plugins`).
  PluginLoaded: defineEvent(
    'PluginLoaded',
    object({
      plugin: plugin(),
      version: string(),
      kind: literal('subprocess', 'lua', 'builtin'),
      entry: string(),
      capabilities: array(string()),
      autoStart: boolean(),
      autoRestart: boolean(),
    }),
  ),
  PluginToolRegistered: defineEvent(
    'PluginToolRegistered',
    object({
      plugin: plugin(),
      name: nonEmptyString(),
      description: string(),
      parameters: record(unknown()),
      access: optional(toolAccess()),
    }),
  ),
  PluginStageRegistered: defineEvent(
    'PluginStageRegistered',
    object({ plugin: plugin(), handlerId: nonEmptyString(), stage: nonEmptyString(), scope: literal('global', 'own_tools') }),
  ),
  PluginChannelRegistered: defineEvent(
    'PluginChannelRegistered',
    object({ plugin: plugin(), name: nonEmptyString(), capabilities: integer(), metaDoc: string() }),
  ),
  /**
   * A plugin's stage handlers leave (the plugin stays, with its tools and channels): they left
   * too many calls unanswered or answered too slowly. It may register stage handlers again only
   * once started afresh (`PluginStarting` attempt 0).
   */
  PluginStagesDetached: defineEvent('PluginStagesDetached', object({ plugin: plugin(), handlers: array(string()), reason: string() })),
  /** The same for a plugin's tools, whose calls timed out too often: the model is no longer offered them. */
  PluginToolsDetached: defineEvent('PluginToolsDetached', object({ plugin: plugin(), tools: array(string()), reason: string() })),
  PluginSubscribed: defineEvent('PluginSubscribed', object({ plugin: plugin(), types: array(string()) })),
  /** The plugin's process ended (or it was stopped): every registration above leaves with it. */
  PluginRegistrationsDetached: defineEvent(
    'PluginRegistrationsDetached',
    object({ plugin: plugin(), reason: string(), tools: array(string()), handlers: array(string()), channels: array(string()) }),
  ),
  PluginInputInjected: defineEvent(
    'PluginInputInjected',
    object({
      plugin: plugin(),
      inputId: nonEmptyString(),
      text: string(),
      kind: literal('queued', 'interrupt'),
      declaredLevel: nullable(integer()),
      level: integer(),
      replyChannel: nullable(string()),
      replyTarget: nullable(string()),
      conversation: nullable(string()),
    }),
  ),
  /**
   * A subprocess plugin was spawned as the leader of process group `pid`; `startTicks` (its
   * start in clock ticks since boot), `bootId` and the `instance` marker in its environment
   * let a later daemon tell its processes from others that reuse the numbers.
   */
  PluginProcessSpawned: defineEvent(
    'PluginProcessSpawned',
    object({ plugin: plugin(), pid: integer(), startTicks: nullable(integer()), bootId: nullable(string()), instance: nonEmptyString() }),
  ),
  /** The plugin's process exited and its whole group was killed. */
  PluginProcessGroupEnded: defineEvent('PluginProcessGroupEnded', object({ plugin: plugin(), pid: integer() })),
  /** At start, a group a previous daemon left open (it was killed): what was still ours in it was killed. */
  PluginProcessGroupReaped: defineEvent(
    'PluginProcessGroupReaped',
    object({ plugin: plugin(), pid: integer(), killed: array(integer()), spared: integer(), reason: string() }),
  ),
  /**
   * At start, the folders of DIR/plugins the host would not load, each with why (a manifest
   * with a mistake, a built-in's name): the whole list of this start, replacing the last one.
   */
  PluginsRefused: defineEvent('PluginsRefused', object({ refused: array(object({ folder: nonEmptyString(), reason: string() })) })),
  /** A plugin sent something the kernel refused (garbage frame, unknown method, withheld capability). */
  PluginMisbehaved: defineEvent('PluginMisbehaved', object({ plugin: plugin(), code: nonEmptyString(), message: string() })),
  /** The complaints of one window past the first few, counted by code instead of recorded one by one. */
  PluginMisbehaviourSummarised: defineEvent(
    'PluginMisbehaviourSummarised',
    object({ plugin: plugin(), suppressed: integer(), byCode: record(integer()), from: number(), to: number() }),
  ),
} as const;

export type PluginEvent = EventUnion<typeof pluginEvents>;

/** Every plugin event type: what the plugin registry folds, so readers need not scan the whole log. */
export const PLUGIN_EVENT_TYPES: readonly PluginEvent['type'][] = typesOf(pluginEvents);
