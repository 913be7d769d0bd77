/**
 * What the web UI's page asks the daemon, as JSON: the conversations and their turns (read from
 * the log), a turn's trajectory, the log itself, and the actions a person takes (send, stop,
 * approve). A request of the wrong shape is answered 400 with what to send instead.
 */
import { type RecordedEvent, SCHEDULER_STREAM, wholeNumberOf } from '../../../events/index.ts';
import { BUILTIN_ADAPTERS, OWNER, PERSON_LEVEL, SecretVaultError } from '../../../actors/index.ts';
import type { KernelControl, PluginAction } from '../../sdk/builtinPlugin.ts';
import type { PluginApi } from '../../sdk/pluginApi.ts';
import { foldWaiting, inputSourceOf, WAITING_EVENT_TYPES, type WaitingInput } from './app/chatFold.ts';

export const WEBUI_CHANNEL = 'webui';
/** The conversation a browser talks in unless it names another. */
export const DEFAULT_CONVERSATION = `${WEBUI_CHANNEL}:owner`;
/** Most events one read returns. */
export const MAX_EVENTS_PER_READ = 2_000;
/** Most turns a conversation view loads (the newest). */
export const MAX_TURNS_SHOWN = 200;
const MAX_TEXT = 256 * 1024;
const CONVERSATION = /^[\w.@:/-]{1,128}$/;
const TURN_STREAM = 'turn-';
/** How far around a turn its memory events are looked for (the input is observed just before the turn's first event). */
const MEMORY_AFTER_TURN_MS = 10_000;
const MEMORY_BEFORE_TURN = 200;

export class BadRequest extends Error {
  readonly status = 400;
}
export class NotFound extends Error {
  readonly status = 404;
}
/** Settings that do not fit the schema: 422, with every problem the daemon's check found. */
export class Unfit extends Error {
  readonly status = 422;
  constructor(readonly problems: readonly Readonly<{ key: string; problem: string }>[]) {
    super(`the settings do not fit: ${problems.map((p) => `${p.key}: ${p.problem}`).join('; ')}`);
  }
}

const PLUGIN_ACTIONS: readonly PluginAction[] = ['enable', 'disable', 'reload', 'start', 'stop'];

type Body = Readonly<Record<string, unknown>>;

const text = (body: Body, key: string, max = MAX_TEXT): string => {
  const value = body[key];
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new BadRequest(`'${key}' must be a non-empty string of at most ${max} characters`);
  }
  return value;
};

const conversationOf = (value: unknown): string => {
  if (value === undefined || value === null || value === '') return DEFAULT_CONVERSATION;
  if (typeof value !== 'string' || !CONVERSATION.test(value)) {
    throw new BadRequest("'conversation' must be 1–128 letters, digits or . _ @ : / - (such as webui:owner)");
  }
  return value;
};

/** A whole number written in digits, at least `least`. */
const seqParam = (value: string | null, name: string, fallback: number, least = 0): number => {
  if (value === null || value === '') return fallback;
  const n = wholeNumberOf(value);
  if (!Number.isSafeInteger(n) || n < least)
    throw new BadRequest(`'${name}' must be a whole number of at least ${least}, got '${value.slice(0, 40)}'`);
  return n;
};

type TurnRequestedData = Readonly<{ turnId: string; taskId: string; input: string; origin?: { conversation?: string } }>;

export type ConversationSummary = Readonly<{ key: string; turns: number; lastAt: number; lastInput: string }>;

/** What the vault refused (a bad name, a missing secret, one set for tools only) is the request's mistake: a 400 saying so. */
const vaultRefusal = (error: unknown): never => {
  if (error instanceof SecretVaultError) throw new BadRequest(error.message);
  throw error;
};

export class WebuiApi {
  constructor(
    private readonly api: PluginApi,
    private readonly control: KernelControl,
    /** Gives the event loop a turn: taken before each read of a time travel or verify, so messages are answered meanwhile. */
    private readonly pause: () => Promise<void>,
  ) {}

  private async turnRequests(): Promise<readonly RecordedEvent[]> {
    return this.control.log.read({ types: ['TurnRequested'], maxCount: 1_000_000 });
  }

  async overview(): Promise<unknown> {
    const byKey = new Map<string, ConversationSummary>();
    for (const event of await this.turnRequests()) {
      const data = event.data as TurnRequestedData;
      const key = data.origin?.conversation ?? '(none)';
      const seen = byKey.get(key);
      byKey.set(key, { key, turns: (seen?.turns ?? 0) + 1, lastAt: event.at, lastInput: data.input.slice(0, 120) });
    }
    return {
      conversations: [...byKey.values()].sort((a, b) => b.lastAt - a.lastAt),
      defaultConversation: DEFAULT_CONVERSATION,
      approvals: this.control.approvals(),
      models: this.control.models(),
      head: await this.control.log.head(),
    };
  }

  /** The conversation's messages that have no turn yet, and the source of each input (who sent it), from the scheduler's events. */
  private async schedulerView(
    key: string,
    requests: readonly RecordedEvent[],
  ): Promise<{ waiting: WaitingInput[]; sources: ReadonlyMap<string, string> }> {
    const scheduler = await this.control.log.read({
      stream: SCHEDULER_STREAM,
      types: WAITING_EVENT_TYPES.filter((type) => type !== 'TurnRequested'),
      maxCount: 1_000_000,
    });
    const waiting = new Map<string, WaitingInput>();
    const sources = new Map<string, string>();
    for (const event of [...scheduler, ...requests].sort((a, b) => a.seq - b.seq)) {
      foldWaiting(waiting, key, event);
      const source = inputSourceOf(event);
      if (source) sources.set(...source);
    }
    return { waiting: [...waiting.values()].slice(-MAX_TURNS_SHOWN), sources };
  }

  /** The conversation's newest turns, each its turn stream's events, and its messages still waiting for a turn. */
  async conversation(params: URLSearchParams): Promise<unknown> {
    const key = conversationOf(params.get('key'));
    const all = await this.turnRequests();
    const requests = all.filter((event) => ((event.data as TurnRequestedData).origin?.conversation ?? '(none)') === key);
    // An export (download=1) is the whole session; the view gets the newest turns.
    const shown = params.get('download') === '1' ? requests : requests.slice(-MAX_TURNS_SHOWN);
    const turns = await Promise.all(
      shown.map(async (request) =>
        this.control.log.read({ stream: request.stream, maxCount: MAX_EVENTS_PER_READ }).then((events) => ({
          turnId: (request.data as TurnRequestedData).turnId,
          events,
        })),
      ),
    );
    const { waiting, sources } = await this.schedulerView(key, all);
    const sourceOf = (request: RecordedEvent) => sources.get((request.data as TurnRequestedData).taskId) ?? null;
    return {
      key,
      turns: turns.map((turn, i) => ({ ...turn, source: sourceOf(shown[i]!) })),
      waiting,
      older: requests.length - shown.length,
      head: await this.control.log.head(),
    };
  }

  async turn(params: URLSearchParams): Promise<unknown> {
    const id = params.get('id') ?? '';
    if (!/^[\w-]{1,100}$/.test(id)) throw new BadRequest("'id' must be a turn id (as the conversation view lists them)");
    const events = await this.control.log.read({ stream: `${TURN_STREAM}${id}`, maxCount: MAX_EVENTS_PER_READ });
    if (events.length === 0) throw new NotFound(`no turn ${id} in the log`);
    const taskId = (events[0]!.data as TurnRequestedData).taskId;
    // How the turn was scheduled: the scheduler's facts about its task, from the first of them on.
    const scheduler = (await this.control.log.read({ stream: 'scheduler', maxCount: 1_000_000 })).filter((event) =>
      JSON.stringify(event.data).includes(taskId),
    );
    return { turnId: id, taskId, events, scheduler, memory: await this.memoryMoves(events) };
  }

  /**
   * What the memory did for the turn: its events of the turn's conversation from the turn's
   * start until shortly after its end (the memory records a turn's utterances once it ends).
   */
  private async memoryMoves(turn: readonly RecordedEvent[]): Promise<readonly RecordedEvent[]> {
    const first = turn[0]!;
    const conversation = (first.data as TurnRequestedData).origin?.conversation;
    if (!conversation) return [];
    const endAt = turn.at(-1)!.at + MEMORY_AFTER_TURN_MS;
    const events = await this.control.log.read({
      stream: 'memory',
      fromSeq: Math.max(1, first.seq - MEMORY_BEFORE_TURN),
      maxCount: MAX_EVENTS_PER_READ,
    });
    return events.filter((event) => {
      const data = event.data as { scope?: unknown; situation?: { peer?: unknown } };
      return (
        event.at >= first.at - MEMORY_AFTER_TURN_MS &&
        event.at <= endAt &&
        (data.scope === conversation || data.situation?.peer === conversation)
      );
    });
  }

  async events(params: URLSearchParams): Promise<unknown> {
    const fromSeq = seqParam(params.get('from'), 'from', 1);
    const limit = Math.min(seqParam(params.get('limit'), 'limit', 500), MAX_EVENTS_PER_READ);
    const types = (params.get('types') ?? '').split(',').filter(Boolean);
    const stream = params.get('stream') || undefined;
    const events = await this.control.log.read({
      fromSeq,
      maxCount: limit,
      ...(types.length ? { types } : {}),
      ...(stream ? { stream } : {}),
    });
    return { events, head: await this.control.log.head() };
  }

  async message(body: Body): Promise<unknown> {
    const conversation = conversationOf(body.conversation);
    const { inputId } = await this.api.injectInterrupt(
      {
        text: text(body, 'text'),
        replyTo: { channel: WEBUI_CHANNEL, target: conversation },
        conversation,
        // Whoever holds the web UI's token is the owner, as whoever reaches the cli socket is.
        principal: OWNER,
      },
      PERSON_LEVEL,
    );
    return { inputId, conversation };
  }

  async cancel(body: Body): Promise<unknown> {
    const inputId = text(body, 'inputId', 200);
    return { cancelled: inputId, stopped: await this.control.cancel(inputId) };
  }

  async stop(): Promise<unknown> {
    await this.control.stop();
    return { stopped: true };
  }

  async approve(body: Body): Promise<unknown> {
    const approval = text(body, 'approval', 200);
    if (typeof body.approved !== 'boolean') throw new BadRequest("'approved' must be true or false");
    const reason = body.reason === undefined || body.reason === '' ? undefined : text(body, 'reason', 2_000);
    await this.control
      .answerApproval({ approval, approved: body.approved, by: OWNER, ...(reason ? { reason } : {}) })
      .catch((error: Error) => {
        throw new BadRequest(error.message);
      });
    return { approval, approved: body.approved };
  }

  approvals(): unknown {
    return { approvals: this.control.approvals() };
  }

  async machines(): Promise<unknown> {
    return { layouts: await this.control.machines.layouts(), ...this.control.machines.live() };
  }

  plugins(): unknown {
    return { plugins: this.control.plugins(), tools: this.control.tools() };
  }

  async pluginAction(body: Body): Promise<unknown> {
    const action = text(body, 'action', 20);
    if (!PLUGIN_ACTIONS.includes(action as PluginAction)) throw new BadRequest(`'action' must be one of ${PLUGIN_ACTIONS.join(', ')}`);
    const name = text(body, 'name', 64);
    const plugin = await this.control.pluginAction(action as PluginAction, name, 'webui').catch((error: Error) => {
      throw new BadRequest(error.message);
    });
    return { plugin };
  }

  memory(params: URLSearchParams): unknown {
    const scope = params.get('scope');
    return this.control.memory.browse(scope ? conversationOf(scope) : undefined);
  }

  recall(params: URLSearchParams): Promise<unknown> {
    const query = params.get('q') ?? '';
    if (!query.trim() || query.length > 2_000) throw new BadRequest("'q' must be the text to recall (at most 2000 characters)");
    const scope = params.get('scope');
    return this.control.memory.recall(query, seqParam(params.get('k'), 'k', 10, 1), scope ? conversationOf(scope) : undefined);
  }

  /** The system at `seq`; stops when `signal` is aborted (the page went away). Refused with TimeTravelBusy when the desk is full. */
  async timeTravel(params: URLSearchParams, signal: AbortSignal): Promise<unknown> {
    return this.control.timeTravel.at(seqParam(params.get('seq'), 'seq', 1), { signal, pause: this.pause });
  }

  verify(signal: AbortSignal): Promise<unknown> {
    return this.control.timeTravel.verify({ signal, pause: this.pause });
  }

  settings(): unknown {
    return { ...this.control.settings.read(), adapters: BUILTIN_ADAPTERS };
  }

  async saveSettings(body: Body): Promise<unknown> {
    const { problems } = await this.control.settings.save(body.settings);
    if (problems.length > 0) throw new Unfit(problems);
    return { saved: true, applies: 'when homed starts again' };
  }

  /** A key goes to the vault; the answer names it and never holds it. */
  setSecret(body: Body): unknown {
    const name = text(body, 'name', 64);
    const value = text(body, 'value', 16 * 1024);
    const tools = body.tools === undefined ? [] : body.tools;
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 100)) {
      throw new BadRequest("'tools' must be a list of tool names or globs");
    }
    try {
      this.control.settings.setSecret(name, value, tools as string[]);
    } catch (error) {
      vaultRefusal(error);
    }
    return { stored: name };
  }

  async probe(body: Body): Promise<unknown> {
    const adapter = text(body, 'adapter', 40);
    if (!(BUILTIN_ADAPTERS as readonly string[]).includes(adapter))
      throw new BadRequest(`'adapter' must be one of ${BUILTIN_ADAPTERS.join(', ')}`);
    const key = body.apiKey === undefined || body.apiKey === '' ? {} : { apiKey: text(body, 'apiKey', 16 * 1024) };
    const secret = body.apiKeySecret === undefined || body.apiKeySecret === '' ? {} : { apiKeySecret: text(body, 'apiKeySecret', 64) };
    return this.control.settings
      .probe({ adapter, baseUrl: text(body, 'baseUrl', 2_000), model: text(body, 'model', 200), ...key, ...secret })
      .catch(vaultRefusal);
  }
}
