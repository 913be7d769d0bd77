/** The daemon's JSON API, as the page calls it (the cookie carries the token). */
import type { LoggedEvent, WaitingInput } from './chatFold.ts';

export class ApiError extends Error {
  constructor(
    message: string,
    /** The HTTP status the daemon answered with (0 when it did not answer). */
    readonly status = 0,
  ) {
    super(message);
  }
}

/** The daemon runs one time travel or verify and queues one more; it refuses others with 429, saying so. */
export const isBusy = (error: unknown): error is ApiError => error instanceof ApiError && error.status === 429;

const call = async <T>(path: string, init?: RequestInit): Promise<T> => {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  const body = (await response.json().catch(() => ({}))) as { error?: string };
  if (!response.ok) throw new ApiError(body.error ?? `${response.status} ${response.statusText}`, response.status);
  return body as T;
};

const post = <T>(path: string, body: unknown): Promise<T> =>
  call<T>(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

export type Approval = Readonly<{ approval: string; name: string; callId: string; conversation: string }>;
export type ConversationSummary = Readonly<{ key: string; turns: number; lastAt: number; lastInput: string }>;
export type Overview = Readonly<{
  conversations: readonly ConversationSummary[];
  defaultConversation: string;
  approvals: readonly Approval[];
  models: readonly { name: string; model: string }[];
  head: number;
}>;
export type Delivery = Readonly<{ channel: string; target: string | null; kind: string; text: string; inputId?: string; outcome?: string }>;

export type WatchedActor = Readonly<{
  sessionId: string;
  id: string;
  systemId: string | null;
  machine: string | null;
  state: unknown;
  status: string;
  events: number;
  lastEvent: string | null;
  updatedAt: number;
}>;
export type WatchedEvent = Readonly<{ at: number; from: string | null; to: string; type: string }>;
export type MachinesLive = Readonly<{ actors: readonly WatchedActor[]; events: readonly WatchedEvent[] }>;
export type LaidOutState = Readonly<{
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  kind: string;
  initial: boolean;
}>;
export type MachineLayout = Readonly<{
  machine: string;
  width: number;
  height: number;
  states: readonly LaidOutState[];
  transitions: readonly Readonly<{ id: string; source: string; target: string; label: string; points: readonly [number, number][] }>[];
}>;

export type SettingsReference = Readonly<{ key: string; type: string; doc: string; values?: readonly string[] }>;
export type SettingsRead = Readonly<{
  settings: Record<string, unknown>;
  broken?: string;
  reference: readonly SettingsReference[];
  secrets: readonly string[];
  file: string;
  adapters: readonly string[];
}>;
export type Probe = Readonly<{ models: readonly string[] | null; listError?: string; answer?: string; error?: string }>;
export type PluginSummary = Readonly<{
  name: string;
  kind: string;
  version: string;
  state: string;
  enabled: boolean;
  restarts: number;
  pid: number | null;
  tools: readonly string[];
  stages: readonly string[];
  channels: readonly string[];
  /** Why its stage handlers were detached, when they were. */
  stagesDetached?: string;
  /** Why its tools were detached, when they were. */
  toolsDetached?: string;
  /** While it is not running: why it last crashed or failed to start. */
  lastError?: string;
  /** Why the start would not load it. */
  refused?: string;
}>;

/** Settings the daemon refused: every problem its schema check found. */
export class SettingsRefused extends ApiError {
  constructor(readonly problems: readonly { key: string; problem: string }[]) {
    super(problems.map((p) => `${p.key}: ${p.problem}`).join('; '), 422);
  }
}

export type ActorAt = Readonly<{ actor: string; machine: string; state: unknown; messages: number; diverged: boolean }>;
export type StateAt = Readonly<{
  seq: number;
  head: number;
  event: LoggedEvent | null;
  actors: readonly ActorAt[];
  projections: Record<string, unknown>;
}>;
export type Divergence = Readonly<{ seq: number; expected: unknown; actual: unknown }>;
export type VerifyResult = Readonly<{
  projections: readonly Readonly<{
    projection: string;
    status: string;
    position?: number;
    firstDivergingSeq?: number | null;
    detail?: string;
  }>[];
  journals: readonly Readonly<{ actors: string; journal: string; divergence: Divergence | null }>[];
  notes: readonly string[];
  first: string | null;
}>;

export type MemoryBrowse = Readonly<{
  scopes: readonly string[];
  scope: string | null;
  context: readonly Readonly<{ eventId: string; role: string; text: string; at: number }>[];
  cold: readonly Readonly<{ docId: string; text: string; createdAt: number; accesses: number }>[];
  relations: readonly Readonly<{ relationId: string; subject: string; predicate: string; object: string; confidence: number }>[];
  scenes: readonly Readonly<{
    sceneId: string;
    kind: string;
    key: string | null;
    strength: number;
    occurrences: number;
    members: number;
  }>[];
  counts: Readonly<{ entities: number; relations: number; blocks: readonly { tier: string; blocks: number }[] }>;
}>;
export type RecallHit = Readonly<{ tier: string; score: number; text: string; cites: readonly string[] }>;

export const api = {
  memory: (scope?: string) => call<MemoryBrowse>(`/api/memory${scope ? `?scope=${encodeURIComponent(scope)}` : ''}`),
  recall: (query: string, scope?: string) =>
    call<{ query: string; hits: RecallHit[] }>(
      `/api/recall?q=${encodeURIComponent(query)}&k=10${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`,
    ),
  /** Aborting `signal` (a newer step asked) closes the request, and the daemon drops the work. */
  timeAt: (seq: number, signal?: AbortSignal) => call<StateAt>(`/api/time?seq=${seq}`, signal ? { signal } : {}),
  verify: () => post<VerifyResult>('/api/verify', {}),
  settings: () => call<SettingsRead>('/api/settings'),
  saveSettings: async (settings: unknown) => {
    const response = await fetch('/api/settings', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ settings }),
    });
    const body = (await response.json().catch(() => ({}))) as { error?: string; problems?: { key: string; problem: string }[] };
    if (response.status === 422 && body.problems) throw new SettingsRefused(body.problems);
    if (!response.ok) throw new ApiError(body.error ?? `${response.status}`, response.status);
    return body;
  },
  setSecret: (name: string, value: string, tools: readonly string[] = []) =>
    post<{ stored: string }>('/api/secret', { name, value, tools }),
  probe: (source: Readonly<{ adapter: string; baseUrl: string; model: string; apiKey?: string; apiKeySecret?: string }>) =>
    post<Probe>('/api/probe', source),
  plugins: () => call<{ plugins: PluginSummary[]; tools: { name: string; plugin: string; description: string }[] }>('/api/plugins'),
  pluginAction: (action: string, name: string) => post<{ plugin: PluginSummary }>('/api/plugin', { action, name }),
  machines: () => call<MachinesLive & { layouts: MachineLayout[] }>('/api/machines'),
  overview: () => call<Overview>('/api/overview'),
  conversation: (key: string) =>
    call<{
      key: string;
      turns: { turnId: string; events: LoggedEvent[]; source: string | null }[];
      waiting: WaitingInput[];
      older: number;
      head: number;
    }>(`/api/conversation?key=${encodeURIComponent(key)}`),
  turn: (id: string) =>
    call<{ turnId: string; taskId: string; events: LoggedEvent[]; scheduler: LoggedEvent[]; memory: LoggedEvent[] }>(
      `/api/turn?id=${encodeURIComponent(id)}`,
    ),
  events: (from: number, limit: number) => call<{ events: LoggedEvent[]; head: number }>(`/api/events?from=${from}&limit=${limit}`),
  approvals: () => call<{ approvals: Approval[] }>('/api/approvals'),
  send: (conversation: string, text: string) => post<{ inputId: string }>('/api/message', { conversation, text }),
  cancel: (inputId: string) => post<unknown>('/api/cancel', { inputId }),
  stop: () => post<unknown>('/api/stop', {}),
  approve: (approval: string, approved: boolean, reason?: string) => post<unknown>('/api/approve', { approval, approved, reason }),
};
