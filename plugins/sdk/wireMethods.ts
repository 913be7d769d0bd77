/**
 * The methods of plugin protocol 1 above the framing (see plugins/PROTOCOL.md, "Methods"):
 * what a plugin asks of the kernel, and what the kernel asks of a plugin.
 */

/** Plugin → kernel requests. */
export const KernelMethod = {
  registerTool: 'tool.register',
  registerStage: 'stage.register',
  registerChannel: 'channel.register',
  subscribe: 'events.subscribe',
  injectInput: 'input.inject',
  injectInterrupt: 'interrupt.inject',
  setting: 'settings.get',
  memoryRecall: 'memory.recall',
  memoryCommit: 'memory.commit',
  knowledgeQuery: 'knowledge.query',
} as const;

/** Plugin → kernel notification: a log line. */
export const LOG_NOTIFY = 'log';

/** Plugin → kernel notification: `main` has finished registering; the plugin is running. */
export const READY_NOTIFY = 'ready';

/** Kernel → plugin requests. */
export const PluginMethod = {
  callTool: 'tool.call',
  runStage: 'stage.run',
  deliver: 'channel.deliver',
} as const;

/** Kernel → plugin notification: one subscribed event. */
export const EVENT_NOTIFY = 'event';

/**
 * Capabilities a manifest may ask for; each guards the kernel methods next to it. A call to a
 * method whose capability was not granted is answered `CAPABILITY_WITHHELD`.
 */
export const CAPABILITY_METHODS = {
  tools: [KernelMethod.registerTool],
  stages: [KernelMethod.registerStage],
  channels: [KernelMethod.registerChannel],
  subscribe: [KernelMethod.subscribe],
  input: [KernelMethod.injectInput],
  interrupt: [KernelMethod.injectInterrupt],
  settings: [KernelMethod.setting],
  /** Recall from every memory tier; commit triples (built-in plugins only: external ones read). */
  memory: [KernelMethod.memoryRecall, KernelMethod.memoryCommit],
  /** Read-only queries of the knowledge graph around an entity. */
  knowledge: [KernelMethod.knowledgeQuery],
  /** No kernel method: a subprocess plugin without it runs in a network namespace of its own (no address reachable). */
  network: [],
  /** No kernel method: a subprocess plugin without it finds the user's home directory empty but for what it needs to run. */
  home: [],
} as const;

/** Methods only built-in plugins may call: external plugins get a read-only memory and no publish. */
export const INTERNAL_ONLY_METHODS: readonly string[] = [KernelMethod.memoryCommit];

export type PluginCapability = keyof typeof CAPABILITY_METHODS;

export const PLUGIN_CAPABILITIES = Object.keys(CAPABILITY_METHODS) as PluginCapability[];

/** The highest interrupt level a plugin may raise; L4 belongs to the kernel. */
export const MAX_PLUGIN_LEVEL = 3;

/** Error code of a call to a capability the plugin was not granted. */
export const CAPABILITY_WITHHELD = 'CAPABILITY_WITHHELD';

/**
 * Error code of an injection past the plugin's bound (too many of its inputs waiting, or
 * interrupts faster than its allowance): the input is not recorded; wait for the plugin's
 * inputs to be handled, then inject again.
 */
export const INJECTION_THROTTLED = 'INJECTION_THROTTLED';
