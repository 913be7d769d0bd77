/**
 * Replies that found no session of their user (a reminder that fired while no waiter was open),
 * kept for the next session that user opens. Only what the person would have read is kept: a
 * reply's text once it ended as an answer, and messages; the newest HELD_PER_USER of each user,
 * for at most HELD_USERS users (the ones heard from last), each text at most HELD_TEXT_AT_MOST.
 */
import type { ChannelDelivery } from '../../sdk/pluginApi.ts';

export const HELD_PER_USER = 20;
export const HELD_USERS = 64;
export const HELD_TEXT_AT_MOST = 64 * 1024;

/** The outcomes whose text is the answer a person waits for. */
const ANSWERS = new Set(['answer', 'handler']);

export class HeldReplies {
  /** Per user, what waits for their next session, oldest first (a Map keeps the users heard from last at its end). */
  private readonly held = new Map<string, string[]>();
  /** The text so far of replies being held, by input. */
  private readonly partial = new Map<string, string>();

  /** Keeps what `delivery`, meant for `from` and delivered to no one, says. */
  hold(from: string, delivery: ChannelDelivery): void {
    const key = delivery.inputId ?? '';
    switch (delivery.kind) {
      case 'chunk': {
        const sofar = this.partial.get(key) ?? '';
        if (sofar.length < HELD_TEXT_AT_MOST) this.partial.set(key, sofar + delivery.text);
        return;
      }
      case 'message':
        return this.keep(from, delivery.text);
      case 'end': {
        const text = this.partial.get(key) ?? '';
        this.partial.delete(key);
        if (ANSWERS.has(delivery.outcome ?? '') && text.trim() !== '') this.keep(from, text);
        return;
      }
      default:
        return;
    }
  }

  /** A reply ended where a session read it: the part held before that session came is dropped. */
  delivered(delivery: ChannelDelivery): void {
    if (delivery.kind === 'end') this.partial.delete(delivery.inputId ?? '');
  }

  /** What waits for `from`, oldest first; it is theirs now and no longer held. */
  take(from: string): string[] {
    const texts = this.held.get(from) ?? [];
    this.held.delete(from);
    return texts;
  }

  private keep(from: string, text: string): void {
    const texts = this.held.get(from) ?? [];
    this.held.delete(from);
    texts.push(text.length > HELD_TEXT_AT_MOST ? `${text.slice(0, HELD_TEXT_AT_MOST)}…` : text);
    this.held.set(from, texts.slice(-HELD_PER_USER));
    while (this.held.size > HELD_USERS) this.held.delete(this.held.keys().next().value!);
  }
}
