/**
 * Logs written by earlier builds stay readable: every older schema version of a declared event
 * upcasts to a payload the current schema accepts. Each versioned type has a sample of each
 * older version here, so a new version cannot ship without one.
 */
import { describe, expect, it } from 'vitest';
import { createDefaultCatalog } from '../../events/index.ts';

const utterance = { eventId: 'e1', role: 'user', text: 'I moved to Lisbon', at: 1_000 };

/** type → version → a payload as that version wrote it. */
const OLD_PAYLOADS: Readonly<Record<string, Readonly<Record<number, unknown>>>> = {
  ContextEventsSunk: {
    1: { scope: 'cli:ada', docId: 'd-e1', events: [utterance], protectedCount: 4, reason: 'low relevance', at: 2_000 },
  },
  HeartbeatFired: { 1: { loop: 'archive', at: 5_000 } },
  HandlerResultRecorded: { 1: { handlerId: 'redactor:before_output', change: null } },
  StageRan: { 1: { stage: 'on_input', shortCircuit: false, outcomes: [] } },
  LlmRequested: {
    1: { round: 0, messages: [{ role: 'user', content: 'hi' }] },
    2: { round: 1, from: 2, added: [{ role: 'user', content: 'and then?' }], total: 3 },
  },
  OutputSent: { 1: { text: 'Hello.' } },
  TurnCancelled: { 1: { during: 'llm' } },
  TurnRequested: { 1: { turnId: 't1', input: 'hi', model: 'm', maxRounds: 8, systemPrompt: 'Be brief.' } },
};

const catalog = createDefaultCatalog();
const versioned = catalog.types().filter((type) => catalog.definition(type, 'test').schemaVersion > 1);

describe('older event versions upcast to the current schema', () => {
  it('every versioned type has a sample of each older version', () => {
    const missing = versioned.flatMap((type) => {
      const { schemaVersion } = catalog.definition(type, 'test');
      return Array.from({ length: schemaVersion - 1 }, (_, i) => i + 1)
        .filter((version) => OLD_PAYLOADS[type]?.[version] === undefined)
        .map((version) => `${type} v${version}`);
    });
    expect(missing).toEqual([]);
  });

  for (const [type, versions] of Object.entries(OLD_PAYLOADS)) {
    for (const [version, payload] of Object.entries(versions)) {
      it(`${type} v${version} reads as a valid current ${type}`, () => {
        const current = catalog.upcast(type, Number(version), structuredClone(payload), 'test');
        expect(() => catalog.validate(type, current)).not.toThrow();
      });
    }
  }

  it('a v1 sink decision becomes one decision holding its one doc', () => {
    const v1 = OLD_PAYLOADS.ContextEventsSunk![1] as Record<string, unknown>;
    expect(catalog.upcast('ContextEventsSunk', 1, v1, 'test')).toEqual({
      scope: 'cli:ada',
      docs: [{ docId: 'd-e1', events: [utterance] }],
      protectedCount: 4,
      reason: 'low relevance',
      at: 2_000,
    });
  });
});
