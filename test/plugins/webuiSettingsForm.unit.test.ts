/**
 * The settings form's pure part: which settings get a field, what a field shows, and the
 * settings its text makes: a cleared field drops the key (and an object it leaves empty), a
 * number reads as one, words as a list, and anything that is not what the kind says is passed on
 * as typed so the daemon's check names it. Checked against the daemon's real schema reference
 * too: every field's key is one the schema knows.
 */
import { describe, expect, it } from 'vitest';
import { checkSettings, SETTINGS_SCHEMA } from '../../actors/index.ts';
import { fieldText, fieldValue, formFields, withFields } from '../../plugins/builtin/webui/app/settingsForm.ts';
import { settingsReference } from '../../plugins/host/settingsDesk.ts';

const fields = formFields(settingsReference());
const byKey = (key: string) => {
  const field = fields.find((f) => f.key === key);
  if (!field) throw new Error(`no field ${key} among ${fields.map((f) => f.key).join(', ')}`);
  return field;
};

describe('the settings form', () => {
  it('has a field for each single value of the schema, none for model sources or lists of objects', () => {
    expect(fields.length).toBeGreaterThan(10);
    expect(fields.some((f) => f.key.startsWith('llm.sources') || f.key.includes('[]'))).toBe(false);
    expect(fields.map((f) => f.kind)).toEqual(expect.arrayContaining(['boolean', 'integer', 'enum', 'words']));
    expect(byKey('memory.keepTopK').kind).toBe('integer');
  });

  it('shows what the file holds, and nothing where the default applies', () => {
    const settings = { memory: { keepTopK: 12 }, security: { tools: { deny: ['shell_*', 'web_fetch'] } } };
    expect(fieldText(settings, byKey('memory.keepTopK'))).toBe('12');
    expect(fieldText(settings, byKey('security.tools.deny'))).toBe('shell_*, web_fetch');
    expect(fieldText(settings, byKey('timeZone'))).toBe('');
  });

  it('sets, clears and passes on what is typed', () => {
    const keep = byKey('memory.keepTopK');
    const deny = byKey('security.tools.deny');
    const settings = { memory: { keepTopK: 12 }, llm: { sources: [{ name: 'x' }] } };
    expect(withFields(settings, new Map([[keep, ' 20 ']]))).toEqual({ memory: { keepTopK: 20 }, llm: { sources: [{ name: 'x' }] } });
    expect(withFields(settings, new Map([[keep, '']]))).toEqual({ llm: { sources: [{ name: 'x' }] } });
    expect(withFields(settings, new Map([[deny, 'a, b,,']]))).toMatchObject({ security: { tools: { deny: ['a', 'b'] } } });
    expect(withFields({}, new Map([[deny, '']]))).toEqual({});
    expect(fieldValue('ten', keep)).toBe('ten');
    expect(settings.memory.keepTopK, 'the settings given are not changed').toBe(12);
  });

  it("puts each field's value at a key the daemon's schema knows", () => {
    for (const field of fields) {
      const made = withFields({}, new Map([[field, field.kind === 'enum' ? field.values![0]! : '1']]));
      expect(fieldText(made, field), field.key).not.toBe('');
      expect(
        checkSettings(made, SETTINGS_SCHEMA).filter((p) => p.problem.startsWith('is not a setting')),
        field.key,
      ).toEqual([]);
    }
  });
});
