/**
 * L1, the working context: the events of each scope in time order. Appended events enter;
 * sunk events leave (to a cold doc); restored events come back at their original times.
 */
import { defineProjection, type ReadModelTx } from '../projection.ts';
import { json, type ContextEventData } from './memoryRows.ts';

const insert = (tx: ReadModelTx, scope: string, e: ContextEventData, seq: number) =>
  tx.run(
    `INSERT INTO memory_context_events (event_id, scope, role, speaker, text, at, cites, blocks, tool_calls, tool_call_id, entered_seq)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (event_id) DO UPDATE SET scope = excluded.scope, entered_seq = excluded.entered_seq`,
    [
      e.eventId,
      scope,
      e.role,
      e.speaker ?? null,
      e.text,
      e.at,
      json(e.cites),
      json(e.blocks),
      e.toolCalls?.length ? JSON.stringify(e.toolCalls) : null,
      e.toolCallId ?? null,
      seq,
    ],
  );

export const contextProjection = defineProjection({
  name: 'memory_context',
  version: 3,
  handles: ['ContextEventAppended', 'ContextEventsSunk', 'ContextEventsRestored'],
  tables: [
    {
      name: 'memory_context_events',
      ddl: `CREATE TABLE memory_context_events (
        event_id TEXT PRIMARY KEY, scope TEXT NOT NULL, role TEXT NOT NULL, speaker TEXT, text TEXT NOT NULL,
        at REAL NOT NULL, cites TEXT NOT NULL, blocks TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT,
        entered_seq INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX memory_context_events_scope ON memory_context_events (scope, at, entered_seq, event_id)`,
    },
    {
      name: 'memory_context_inputs',
      ddl: 'CREATE TABLE memory_context_inputs (scope TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID',
    },
  ],
  evolve(tx, event) {
    switch (event.type) {
      case 'ContextEventAppended':
        insert(tx, event.data.scope, event.data.event, event.seq);
        if (event.data.event.role === 'user') {
          tx.run('INSERT INTO memory_context_inputs (scope, text) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET text = excluded.text', [
            event.data.scope,
            event.data.event.text,
          ]);
        }
        return;
      case 'ContextEventsRestored':
        for (const e of event.data.events) insert(tx, event.data.scope, e, event.seq);
        return;
      case 'ContextEventsSunk':
        for (const { events } of event.data.docs)
          for (const e of events) tx.run('DELETE FROM memory_context_events WHERE event_id = ?', [e.eventId]);
        return;
    }
  },
  view: (tx) => tx.all('SELECT scope, count(*) AS events FROM memory_context_events GROUP BY scope ORDER BY scope'),
});

export type ContextRow = Readonly<{
  event_id: string;
  scope: string;
  role: string;
  speaker: string | null;
  text: string;
  at: number;
  cites: string;
  blocks: string;
  tool_calls: string | null;
  tool_call_id: string | null;
}>;

/** A context row as the event it came from (what a sink decision carries to L2). */
export const rowEvent = (r: ContextRow): ContextEventData => {
  const cites = JSON.parse(r.cites) as string[];
  const blocks = JSON.parse(r.blocks) as NonNullable<ContextEventData['blocks']>;
  return {
    eventId: r.event_id,
    role: r.role as ContextEventData['role'],
    ...(r.speaker ? { speaker: r.speaker } : {}),
    text: r.text,
    at: r.at,
    ...(cites.length ? { cites } : {}),
    ...(blocks.length ? { blocks } : {}),
    ...(r.tool_calls ? { toolCalls: JSON.parse(r.tool_calls) as NonNullable<ContextEventData['toolCalls']> } : {}),
    ...(r.tool_call_id ? { toolCallId: r.tool_call_id } : {}),
  };
};

/** A scope's context in time order (ties in the order they entered, then by id: the same on every rebuild). */
export const contextOf = (tx: ReadModelTx, scope: string): ContextRow[] =>
  tx.all<ContextRow>(
    'SELECT event_id, scope, role, speaker, text, at, cites, blocks, tool_calls, tool_call_id FROM memory_context_events WHERE scope = ? ORDER BY at, entered_seq, event_id',
    [scope],
  );

/** Every scope's latest input (what the distill loop prunes against), by scope. */
export const latestInputs = (tx: ReadModelTx): { scope: string; text: string }[] =>
  tx.all('SELECT scope, text FROM memory_context_inputs ORDER BY scope');

/** Every scope that has context now. */
export const contextScopes = (tx: ReadModelTx): string[] =>
  tx.all<{ scope: string }>('SELECT DISTINCT scope FROM memory_context_events ORDER BY scope').map((r) => r.scope);

/** Context events said after `since` and up to `until` (what the rule distiller reads), in time order. */
export const contextSaidBetween = (tx: ReadModelTx, since: number, until: number): ContextRow[] =>
  tx.all<ContextRow>(
    'SELECT event_id, scope, role, speaker, text, at, cites, blocks, tool_calls, tool_call_id FROM memory_context_events WHERE at > ? AND at <= ? ORDER BY at, entered_seq, event_id',
    [since, until],
  );

/** Events per scope, for a count of what memory holds. */
export const contextCounts = (tx: ReadModelTx): { scope: string; events: number }[] =>
  tx.all('SELECT scope, count(*) AS events FROM memory_context_events GROUP BY scope ORDER BY scope');
