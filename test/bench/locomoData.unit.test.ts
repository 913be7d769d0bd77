import { describe, expect, it } from 'vitest';
import { LocomoDataError, parseConversation, parseSessionDate } from '../../bench/locomo/locomoData.ts';

const FILE = 'conv-t.json';
const date = (text: unknown) => parseSessionDate(text, FILE, 'session_1_date_time');

describe('parseSessionDate', () => {
  it('reads "h:mm am|pm on D Month, YYYY" as UTC', () => {
    expect(date('1:56 pm on 8 May, 2023')).toBe(Date.UTC(2023, 4, 8, 13, 56));
    expect(date('10:37 am on 27 June, 2023')).toBe(Date.UTC(2023, 5, 27, 10, 37));
  });

  it('takes 12 am as midnight and 12 pm as noon', () => {
    expect(date('12:09 am on 13 September, 2023')).toBe(Date.UTC(2023, 8, 13, 0, 9));
    expect(date('12:00 pm on 1 January, 2024')).toBe(Date.UTC(2024, 0, 1, 12, 0));
    expect(date('11:59 pm on 31 December, 2023')).toBe(Date.UTC(2023, 11, 31, 23, 59));
  });

  it.each([
    ['13:00 pm on 8 May, 2023'],
    ['0:30 am on 8 May, 2023'],
    ['1:60 pm on 8 May, 2023'],
    ['1:56 pm on 31 June, 2023'],
    ['1:56 pm on 29 February, 2023'],
    ['1:56 pm on 8 Mai, 2023'],
    ['1:56 PM on 8 May, 2023'],
    ['13:56 on 8 May, 2023'],
    ['2023-05-08T13:56:00Z'],
    [''],
    [42],
  ])('rejects %j naming the file and the field', (text) => {
    expect(() => date(text)).toThrow(LocomoDataError);
    expect(() => date(text)).toThrow(/conv-t\.json: session_1_date_time:/);
  });

  it('accepts 29 February in a leap year', () => {
    expect(date('9:00 am on 29 February, 2024')).toBe(Date.UTC(2024, 1, 29, 9, 0));
  });
});

const fixture = (): Record<string, unknown> => ({
  speaker_a: 'Ann',
  speaker_b: 'Bob',
  session_10_date_time: '9:00 am on 3 June, 2023',
  session_10: [{ speaker: 'Ann', dia_id: 'D10:1', text: 'Back from Lisbon.' }],
  session_2_date_time: '12:15 am on 2 June, 2023',
  session_2: [
    { speaker: 'Ann', dia_id: 'D2:1', text: 'I adopted a dog.', img_url: ['x'], blip_caption: 'a photo of a dog' },
    { speaker: 'Bob', dia_id: 'D2:2', text: 'What is its name?', blip_caption: null },
  ],
  session_3_date_time: '1:00 pm on 20 June, 2023',
  session_2_summary: 'not input',
  qa: [
    { question: 'What did Ann adopt?', answer: 'a dog', evidence: ['D2:1'], category: 4 },
    { question: 'Where was Ann?', answer: 'Lisbon', evidence: ['D10:1; D2:1', ''], category: 1 },
    { question: 'Is Ann kind?', answer: 'yes', evidence: [], category: 3 },
    { question: 'Only blanks?', answer: 'no', evidence: ['', 'D'], category: 2 },
    { question: 'Did Bob adopt?', adversarial_answer: 'yes', evidence: ['D2:1'], category: 5 },
    { question: 'Missing turn?', answer: '-', evidence: ['D9:9', 'D2:2'], category: 2 },
  ],
});

describe('parseConversation', () => {
  const conv = parseConversation(fixture(), '/some/dir/conv-t.json');

  it('orders sessions numerically and times turns from the session date plus one second each', () => {
    expect(conv.name).toBe('conv-t');
    expect(conv.speakers).toEqual(['Ann', 'Bob']);
    expect(conv.turns.map((t) => t.diaId)).toEqual(['D2:1', 'D2:2', 'D10:1']);
    const s2 = Date.UTC(2023, 5, 2, 0, 15);
    expect(conv.turns.map((t) => t.at)).toEqual([s2, s2 + 1000, Date.UTC(2023, 5, 3, 9, 0)]);
    expect(conv.turns[0]).toEqual({
      conversation: 'conv-t',
      session: 2,
      diaId: 'D2:1',
      speaker: 'Ann',
      text: 'I adopted a dog.',
      at: s2,
      imageCaption: 'a photo of a dog',
    });
    expect(conv.turns[1]).not.toHaveProperty('imageCaption');
  });

  it('keeps categories 1-4 with evidence, splitting joined ids and dropping blanks and unknown ids', () => {
    expect(conv.questions.map((q) => [q.question, q.category, q.evidence])).toEqual([
      ['What did Ann adopt?', 4, ['D2:1']],
      ['Where was Ann?', 1, ['D10:1', 'D2:1']],
      ['Missing turn?', 2, ['D2:2']],
    ]);
    expect(conv.droppedNoEvidence).toBe(2);
    expect(conv.warnings.join('\n')).toMatch(/split into D10:1, D2:1/);
    expect(conv.warnings.join('\n')).toMatch(/"D" is not a dia_id; dropped/);
    expect(conv.warnings.join('\n')).toMatch(/D9:9 cites no turn/);
  });

  it('keeps category 5 apart: its question and the turn its false premise twists, never among the scored ones', () => {
    expect(conv.adversarial).toEqual([
      { conversation: conv.name, index: expect.any(Number), question: 'Did Bob adopt?', evidence: ['D2:1'] },
    ]);
    expect(conv.questions.some((q) => q.question === 'Did Bob adopt?')).toBe(false);
  });

  const broken = (edit: (raw: Record<string, unknown>) => void): unknown => {
    const raw = fixture();
    edit(raw);
    return raw;
  };

  it.each([
    ['not an object', () => [], /\(root\)/],
    ['a missing speaker', () => broken((r) => delete r.speaker_b), /speaker_b/],
    [
      'no sessions',
      () =>
        broken((r) => {
          delete r.session_2;
          delete r.session_10;
        }),
      /session_N: no sessions/,
    ],
    ['a session without a date', () => broken((r) => delete r.session_10_date_time), /session_10_date_time/],
    ['a bad session date', () => broken((r) => (r.session_2_date_time = '8 May 2023')), /session_2_date_time: not a session date/],
    ['a session that is not a list', () => broken((r) => (r.session_2 = {})), /session_2: expected a list/],
    ['a turn without text', () => broken((r) => (r.session_10 = [{ speaker: 'Ann', dia_id: 'D10:1' }])), /session_10\[0\]\.text/],
    [
      'a dia_id from another session',
      () => broken((r) => (r.session_10 = [{ speaker: 'Ann', dia_id: 'D2:9', text: 'x' }])),
      /session_10\[0\]\.dia_id: expected D10:<n>/,
    ],
    [
      'a duplicate dia_id',
      () =>
        broken(
          (r) =>
            (r.session_10 = [
              { speaker: 'A', dia_id: 'D10:1', text: 'x' },
              { speaker: 'A', dia_id: 'D10:1', text: 'y' },
            ]),
        ),
      /duplicate dia_id/,
    ],
    [
      'a non-string caption',
      () => broken((r) => (r.session_10 = [{ speaker: 'A', dia_id: 'D10:1', text: 'x', blip_caption: 3 }])),
      /blip_caption/,
    ],
    ['qa missing', () => broken((r) => delete r.qa), /qa: expected a list/],
    ['a category out of range', () => broken((r) => (r.qa = [{ question: 'q', evidence: ['D2:1'], category: 6 }])), /qa\[0\]\.category/],
    ['evidence not a list', () => broken((r) => (r.qa = [{ question: 'q', evidence: 'D2:1', category: 1 }])), /qa\[0\]\.evidence/],
    [
      'a non-string evidence entry',
      () => broken((r) => (r.qa = [{ question: 'q', evidence: [7], category: 1 }])),
      /qa\[0\]\.evidence\[0\]/,
    ],
  ])('rejects %s with a LocomoDataError naming the file', (_, make, field) => {
    let caught: unknown;
    try {
      parseConversation(make(), 'conv-t.json');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LocomoDataError);
    expect((caught as LocomoDataError).code).toBe('LOCOMO_DATA_INVALID');
    expect((caught as LocomoDataError).message).toMatch(/^conv-t\.json: /);
    expect((caught as LocomoDataError).message).toMatch(field);
  });
});
