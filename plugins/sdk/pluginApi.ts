/**
 * The surface a plugin sees, the same for a subprocess plugin (over the wire, see
 * `runPlugin`) and a built-in one (in-process, handed to it by the host). Plain shapes only,
 * so a plugin author needs nothing else of the kernel.
 */
import type { StageChange, StageContext, StageName } from '../../actors/index.ts';

export type { StageChange, StageContext, StageName };

/** A JSON-Schema object describing a tool's arguments (what providers pass to the model). */
export type ToolParameters = Readonly<Record<string, unknown>>;

export type ToolSpec = Readonly<{
  /** 1–64 letters, digits, '_' or '-'; unique across every plugin (prefix it with your plugin's name). */
  name: string;
  description: string;
  parameters: ToolParameters;
  /**
   * Which arguments touch the machine: names of arguments holding a path the tool reads, a path
   * it writes, a URL or host it connects to. The kernel's sandbox checks them before each call.
   */
  access?: Readonly<{ read?: readonly string[]; write?: readonly string[]; network?: readonly string[] }>;
}>;

/** What a tool returns: text for the model, or text marked as a failure report. */
export type ToolReply = string | Readonly<{ content: string; isError?: boolean }>;

/**
 * A call as its tool sees it. Built-in tools also get the turn's `conversation` (its memory
 * scope) and `replyTo` (where the turn's reply went): what a tool that answers later needs.
 */
export type ToolCallInfo = Readonly<{
  callId: string;
  name: string;
  conversation?: string;
  replyTo?: Readonly<{ channel: string; target?: string }>;
  /** Built-in tools: who the turn's input was from (a timer fires as the principal that set it). */
  principal?: string;
}>;

export type ToolHandler = (args: Readonly<Record<string, unknown>>, call: ToolCallInfo) => ToolReply | Promise<ToolReply>;

export type StageSpec = Readonly<{
  stage: StageName;
  /** `own_tools`: the handler runs only around this plugin's own tools (tool stages only). Default `global`. */
  scope?: 'global' | 'own_tools';
}>;

/** Returns the change to make, or null/undefined to change nothing (an audit). */
export type StageHandler = (
  context: StageContext,
  stage: StageName,
) => StageChange | null | undefined | Promise<StageChange | null | undefined>;

export type ChannelSpec = Readonly<{
  name: string;
  /**
   * Capability names: the payload types 'text', 'file', 'image', 'audio', 'structured'; 'realtime'
   * (late chunks may be dropped); 'progress' (deliveries of kind 'tool' when a tool starts).
   */
  capabilities: readonly ('text' | 'file' | 'image' | 'audio' | 'structured' | 'realtime' | 'progress')[];
  /** How `meta` routes a message on this channel (shown to the model by the _help tool). */
  metaDoc?: string;
}>;

/**
 * One delivery to a channel. `target` is what the input named in `replyTo.target` (e.g. a
 * cli session), `kind` says whether this is a streamed piece of a reply, its end, or a
 * message the model sent with `output_send__{channel}`.
 */
export type ChannelDelivery = Readonly<{
  channel: string;
  target: string | null;
  /** `tool`: a tool started for the reply, `text` its name (only to channels with 'progress'). */
  kind: 'chunk' | 'end' | 'message' | 'tool';
  text: string;
  /** The input the reply answers, when there is one (a client matches replies to its messages by it). */
  inputId?: string;
  /** With `end`: what the reply was (`answer`; `handler`, `denied`, `round_limit` from the kernel; `blocked`: the security review withheld the input; `failed`; `cancelled`). */
  outcome?: string;
  /** With `end` and outcome `cancelled`: why it stopped (`stop`: a person stopped it, `shutdown`: homed is stopping, …). */
  stoppedFor?: string;
  /** With a `message` that asks a person to approve a call: the approval's id; the reply waits for the answer. */
  approval?: string;
  meta?: Readonly<Record<string, unknown>>;
}>;

export type ChannelDeliver = (delivery: ChannelDelivery) => void | Promise<void>;

/** An event of the log, as subscribers receive it. */
export type PluginEvent = Readonly<{ seq: number; stream: string; type: string; at: number; data: unknown }>;

export type InjectedInput = Readonly<{
  text: string;
  /** Where the reply goes: a channel this plugin registered, and a target on it. */
  replyTo?: Readonly<{ channel: string; target?: string }>;
  /**
   * The conversation this input belongs to: the memory scope its context lives in. Default
   * `<channel>:<target>` (`<plugin>:-` without replyTo); give a stable key when targets are
   * transient (a cli session). A plugin's own only: `<its name or one of its channels>:<peer>`;
   * any other (the person's `cli:…`, another plugin's) is refused.
   */
  conversation?: string;
  /**
   * Who the input is from: one of the profiles your manifest declares (`<plugin>.<profile>`);
   * its tool rules hold for the turn. Without one, the input is from your plugin itself.
   */
  profile?: string;
  /** Built-in plugins only: who the input is from (`owner` at the machine, `internal`, or the principal a timer was set for). */
  principal?: string;
}>;

export type InjectedReceipt = Readonly<{ inputId: string; level: number }>;

export type MemoryItem = Readonly<{ tier: 'context' | 'cold' | 'graph'; text: string; cites: readonly string[]; score: number }>;

export type Triple = Readonly<{ subject: string; predicate: string; object: string; confidence?: number }>;

export type KnowledgeRelation = Readonly<{
  subject: string;
  predicate: string;
  object: string;
  confidence: number;
  sentence: string | null;
  hops: number;
}>;

export interface PluginMemory {
  /** What the memory holds about `query`, best first (the agent's own recall path). */
  recall(query: string, k?: number): Promise<readonly MemoryItem[]>;
  /** Writes triples to the graph, with the sentence they come from (built-in plugins only). */
  commit(triples: readonly Triple[], sentence?: string): Promise<{ relationIds: readonly string[] }>;
}

export interface PluginKnowledge {
  /** Relations within `depth` hops (default 2) of an entity, nearest first. Read-only. */
  query(entity: string, depth?: number): Promise<readonly KnowledgeRelation[]>;
}

export interface PluginApi {
  /** The plugin's name, from its manifest. */
  readonly name: string;
  registerTool(spec: ToolSpec, handler: ToolHandler): Promise<void>;
  registerStage(spec: StageSpec, handler: StageHandler): Promise<void>;
  registerOutputChannel(spec: ChannelSpec, deliver: ChannelDeliver): Promise<void>;
  /** Receives every event of these types appended from now on. */
  subscribe(types: readonly string[], listener: (event: PluginEvent) => void): Promise<void>;
  /** Queues an input (a task, L0). */
  injectInput(input: InjectedInput): Promise<InjectedReceipt>;
  /** Raises an interrupt at `level` 1–3 (4 is the kernel's: a plugin asking for it gets 3). */
  injectInterrupt(input: InjectedInput, level: number): Promise<InjectedReceipt>;
  /**
   * A value of this plugin's own settings (`plugins.<name>.<key>` in settings.json; `''` for all
   * of them), or undefined. Secret-named fields are never handed out.
   */
  setting(key: string): Promise<unknown>;
  /** Needs the 'memory' capability. */
  readonly memory: PluginMemory;
  /** Needs the 'knowledge' capability. */
  readonly knowledge: PluginKnowledge;
  /** A line for the daemon's log. */
  log(line: string): void;
}
