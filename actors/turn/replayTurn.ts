/**
 * Replays a recorded turn from its journal alone: a fresh turn machine, given the toolset the
 * turn named, gets every recorded message again (the request, the model's pieces and answers,
 * tool and handler results, timeouts, stops), and the facts it decides must equal the recorded
 * facts byte for byte. Nothing is called. Turns recorded before the turn was journaled this way
 * (TurnRequested v1) are counted apart: this build does not re-decide them.
 */
import { TURN_INPUT_TYPES, TURN_STREAM_PREFIX, type EventStore } from '../../events/index.ts';
import { turnMachine } from '../../machines/turn/index.ts';
import { replayEvents, type ReplayDivergence } from '../journal/replayJournal.ts';
import { ToolsetLedger, toolsetId } from './toolsets.ts';

export type TurnReplay = Readonly<{
  stream: string;
  divergence: ReplayDivergence | null;
  earlierFormat: boolean;
  messages: number;
  /** The replayed machine's state value after the last message (absent when nothing was replayed). */
  state?: unknown;
}>;

/** `untilSeq`: replay only the journal's events up to that global seq (the turn as it stood then). */
export const replayTurn = async (
  store: EventStore,
  stream: string,
  toolsets = new ToolsetLedger(store),
  untilSeq = Number.MAX_SAFE_INTEGER,
): Promise<TurnReplay> => {
  const events = (await store.readStream(stream)).filter((e) => e.seq <= untilSeq);
  const request = events[0];
  if (request?.type !== 'TurnRequested') {
    const actual = request ? { type: request.type, data: request.data } : null;
    return {
      stream,
      divergence: { seq: request?.seq ?? 0, expected: { type: 'TurnRequested', data: null }, actual },
      earlierFormat: false,
      messages: 0,
    };
  }
  if (request.schemaVersion < 2) return { stream, divergence: null, earlierFormat: true, messages: 0 };
  const toolset = await toolsets.get(request.data.toolset);
  if (!toolset) {
    const expected = { type: 'ToolsetRecorded', data: { toolset: request.data.toolset } };
    return { stream, divergence: { seq: request.seq, expected, actual: null }, earlierFormat: false, messages: 0 };
  }
  // The firewall's part of a toolset (grants, sandbox) decides what a call gets: its content must
  // be what its content-derived id says. Sets without it may have been recorded under older ids.
  if ((toolset.secrets || toolset.sandbox) && toolsetId(toolset) !== request.data.toolset) {
    const expected = { type: 'ToolsetRecorded', data: { toolset: request.data.toolset } };
    const actual = { type: 'ToolsetRecorded', data: { toolset: toolsetId(toolset), note: 'its content does not hash to its id' } };
    return { stream, divergence: { seq: request.seq, expected, actual }, earlierFormat: false, messages: 0 };
  }
  const replay = replayEvents({ events, logic: turnMachine, input: { toolset }, inputTypes: TURN_INPUT_TYPES });
  return { stream, divergence: replay.divergence, earlierFormat: false, messages: replay.messages.length, state: replay.snapshot.value };
};

/** Every turn stream in the log, oldest first. */
export const turnStreams = async (store: EventStore): Promise<string[]> =>
  (await store.readAll({ types: ['TurnRequested'] })).map((e) => e.stream).filter((s) => s.startsWith(TURN_STREAM_PREFIX));
