/**
 * A before_toolcall deny is never lost: whatever else a change carries (nil as msgpack sends
 * it, absent, valid, or fields the stage refuses), a change with a deny denies the call, and no
 * other handler's change turns the denial back into an allow.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkChange, createStageContext, finishStage, type HandlerResult } from '../../machines/stagePipeline/index.ts';
import { decodeBody, encodeBody } from '../../plugins/protocol/index.ts';

const RUNS = Number(process.env.FC_RUNS ?? 500);

/** What the kernel reads after the value crossed the wire: null and undefined both arrive as msgpack nil. */
const overTheWire = (value: unknown): unknown => decodeBody(encodeBody(value));

const reason = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0);
const json = fc.jsonValue({ maxDepth: 2 });

/** A value for a change field: absent, nil, or one before_toolcall admits. */
const nilOrValid = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof(
    fc.constant({ absent: true as const }),
    fc.constant({ value: null }),
    fc.constant({ value: undefined }),
    valid.map((value) => ({ value })),
  );

const fieldsOf = (fields: Record<string, { absent: true } | { value: unknown }>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).flatMap(([key, f]) => ('absent' in f ? [] : [[key, f.value]])));

/** Other fields a before_toolcall change may hold: nil, absent or valid (the fields it does not admit, only nil or absent). */
const admittedRest = fc.record({
  rewriteArgs: nilOrValid(fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 3 })),
  response: nilOrValid(fc.string()),
  set: nilOrValid(fc.constant(null)),
  inject: nilOrValid(fc.constant(undefined)),
  redact: nilOrValid(fc.constant(null)),
  unknown: nilOrValid(fc.constant(undefined)),
});

/** Anything at all, including fields the stage refuses and wrong types. */
const anyRest = fc.dictionary(
  fc.constantFrom('rewriteArgs', 'response', 'set', 'inject', 'redact', 'unknown', 'toolCall'),
  fc.oneof(json, fc.constant(null), fc.constant(undefined)),
  { maxKeys: 5 },
);

/** A deny the handler meant, in the shapes a plugin writes it: with nil extra fields, or as nil-padded maps. */
const deny = fc.record({ reason, note: fc.constantFrom(null, undefined, 'x') });

const context = createStageContext('read it', { toolCall: { id: 'c1', name: 'files_read', args: { path: '/etc/shadow' } } });

describe('a before_toolcall deny', () => {
  it('with every other field nil, absent or valid, is admitted with its reason', () => {
    fc.assert(
      fc.property(deny, admittedRest, (d, rest) => {
        const checked = checkChange('before_toolcall', overTheWire({ ...fieldsOf(rest), deny: d }));
        expect(checked.ok).toBe(true);
        expect(checked.ok && checked.change?.deny).toEqual({ reason: d.reason });
      }),
      { numRuns: RUNS },
    );
  });

  it('with anything else beside it, still denies the call: the refused rest is recorded, the deny stands', () => {
    fc.assert(
      fc.property(deny, anyRest, (d, rest) => {
        const input = {
          stage: 'before_toolcall' as const,
          context,
          handlers: [{ id: 'h', plugin: 'p', scope: 'global' as const }],
          timeoutMs: 1,
        };
        const output = finishStage(input, [{ kind: 'resolved', value: overTheWire({ ...rest, deny: d }) }]);
        expect(output.context.denial).toEqual({ handlerId: 'h', reason: d.reason });
      }),
      { numRuns: RUNS },
    );
  });

  it('from any one of several handlers survives whatever the others answer, in any order', () => {
    const result: fc.Arbitrary<HandlerResult> = fc.oneof(
      fc.constant<HandlerResult>({ kind: 'pending' }),
      fc.string().map((error): HandlerResult => ({ kind: 'rejected', error })),
      fc.oneof(json, anyRest, fc.constant(null)).map((value): HandlerResult => ({ kind: 'resolved', value: overTheWire(value) })),
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 4 }), deny, anyRest, fc.nat(), (others, d, rest, at) => {
        const denying: HandlerResult = { kind: 'resolved', value: overTheWire({ ...rest, deny: d }) };
        const results = [...others];
        results.splice(at % (others.length + 1), 0, denying);
        const handlers = results.map((_, i) => ({ id: `h${i}`, plugin: `p${i}`, scope: 'global' as const }));
        const output = finishStage({ stage: 'before_toolcall', context, handlers, timeoutMs: 1 }, results);
        expect(output.context.denial).not.toBeNull();
      }),
      { numRuns: RUNS },
    );
  });

  it('in a shape that cannot be read (a blank reason, a bare string or true) denies with a reason saying so', () => {
    for (const [value, expected] of [
      [
        { deny: { reason: '  ' }, rewriteArgs: null },
        /denied by a handler whose change could not be read \(refused change: deny.reason must say why/,
      ],
      [{ deny: 'no shadow files' }, /^no shadow files$/],
      [{ deny: true }, /could not be read \(refused change: deny must be an object, got a boolean\)/],
    ] as const) {
      const checked = checkChange('before_toolcall', value);
      expect(checked.ok).toBe(false);
      expect(!checked.ok && checked.denied?.deny?.reason).toMatch(expected);
    }
    expect(checkChange('before_toolcall', { deny: false })).toEqual({
      ok: false,
      error: 'refused change: deny must be an object, got a boolean',
    });
    expect(checkChange('before_toolcall', { deny: null, rewriteArgs: null, response: null })).toEqual({ ok: true, change: null });
  });
});
