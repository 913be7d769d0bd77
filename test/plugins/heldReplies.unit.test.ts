/**
 * Replies that found no session: an answer's text is kept whole once it ended as an answer, a
 * message as it is, nothing of a reply that failed or was stopped; each user takes their own,
 * once, oldest first; and what is kept is bounded per user, in users and in length.
 */
import { describe, expect, it } from 'vitest';
import { HELD_PER_USER, HELD_TEXT_AT_MOST, HELD_USERS, HeldReplies } from '../../plugins/builtin/cli/heldReplies.ts';
import type { ChannelDelivery } from '../../plugins/sdk/pluginApi.ts';

const delivery = (kind: ChannelDelivery['kind'], text: string, inputId?: string, outcome?: string): ChannelDelivery => ({
  channel: 'cli',
  target: 'ada@s1',
  kind,
  text,
  ...(inputId ? { inputId } : {}),
  ...(outcome ? { outcome } : {}),
});

/** A whole reply of `text` for input `id`, in two pieces, ended with `outcome`. */
const reply = (held: HeldReplies, from: string, id: string, text: string, outcome = 'answer'): void => {
  held.hold(from, delivery('chunk', text.slice(0, 3), id));
  held.hold(from, delivery('tool', 'timer_set', id));
  held.hold(from, delivery('chunk', text.slice(3), id));
  held.hold(from, delivery('end', '', id, outcome));
};

describe('held replies', () => {
  it('keeps the text of answers and messages for their user, given once, oldest first', () => {
    const held = new HeldReplies();
    reply(held, 'ada', 'i1', 'Time to stretch!');
    held.hold('ada', delivery('message', 'a note the model sent'));
    reply(held, 'ada', 'i2', 'This broke halfway', 'failed');
    reply(held, 'ada', 'i3', 'Stopped midway', 'cancelled');
    reply(held, 'bob', 'i4', 'For Bob');
    expect(held.take('ada')).toEqual(['Time to stretch!', 'a note the model sent']);
    expect(held.take('ada')).toEqual([]);
    expect(held.take('bob')).toEqual(['For Bob']);
  });

  it('keeps the newest of each user, for the users heard from last, each text cut to its bound', () => {
    const held = new HeldReplies();
    for (let i = 0; i < HELD_PER_USER + 5; i++) held.hold('ada', delivery('message', `note ${i}`));
    const notes = held.take('ada');
    expect(notes).toHaveLength(HELD_PER_USER);
    expect(notes[0]).toBe('note 5');
    for (let u = 0; u <= HELD_USERS; u++) held.hold(`user${u}`, delivery('message', 'hi'));
    expect(held.take('user0')).toEqual([]);
    expect(held.take(`user${HELD_USERS}`)).toEqual(['hi']);
    reply(held, 'ada', 'long', 'x'.repeat(HELD_TEXT_AT_MOST * 2));
    expect(held.take('ada')[0]!.length).toBeLessThanOrEqual(HELD_TEXT_AT_MOST + 1);
  });
});
