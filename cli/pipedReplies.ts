/**
 * A piped session's output: the words of its own replies as they stream, and what comes from
 * elsewhere (a reminder, a reply an earlier run left waiting for approval) held, marked `↪`, and
 * given out whole once no line of its own is in progress, where it would cut into it. Bounded:
 * at most MAX_HELD of a reply from elsewhere and MAX_QUEUED in all wait; what is left out is counted.
 */

/** At most this much of a reply asked for elsewhere is held until it ends (the rest is counted). */
export const MAX_HELD = 1 << 20;
/** At most this much from elsewhere, all replies and messages together, waits for our line to end (the rest is counted). */
export const MAX_QUEUED = 4 * MAX_HELD;

/** What came so far of a reply from elsewhere, and how many characters of it past MAX_HELD were left out. */
type Held = { text: string; notHeld: number };

/** `R`: whatever stands for a reply (the session's entry for it). */
export class PipedReplies<R> {
  private readonly held = new Map<R, Held>();
  private readonly queued: string[] = [];
  private queuedChars = 0;
  private leftOut = 0;
  /** The output's last line is a reply's streamed words not yet ended by a line break. */
  private midLine = false;

  constructor(private readonly write: (text: string) => void) {}

  /** Streamed words of a reply of ours. */
  words(text: string): void {
    if (text) this.midLine = !text.endsWith('\n');
    this.write(text);
    this.giveOut();
  }

  /** A line of ours (a message of its reply) after the words in progress, on a line of its own. */
  line(text: string): void {
    this.write(`${this.midLine ? '\n' : ''}${text}\n`);
    this.midLine = false;
    this.giveOut();
  }

  /** The end of a reply of ours, as `text` says it (it ends its line). */
  ended(text: string): void {
    this.write(text);
    this.midLine = false;
    this.giveOut();
  }

  /** Streamed words of `reply`, asked for elsewhere: held until it ends. */
  hold(reply: R, text: string): void {
    const held = this.held.get(reply) ?? { text: '', notHeld: 0 };
    const room = Math.max(0, MAX_HELD - held.text.length);
    held.text += text.slice(0, room);
    held.notHeld += Math.max(0, text.length - room);
    this.held.set(reply, held);
  }

  /** What came of `reply` from elsewhere so far, then `text` (a line said of it), given out once no line of ours is in progress. */
  fromElsewhere(reply: R | undefined, text?: string): void {
    if (reply !== undefined) this.release(reply);
    if (text !== undefined) this.queue(text);
    this.giveOut();
  }

  /** At the end: the replies from elsewhere still under way (what came of them, said so), then all that waits. */
  finish(): void {
    for (const reply of [...this.held.keys()]) this.release(reply, ' (still being written as waiter ended)');
    if (this.queued.length === 0) return;
    if (this.midLine) this.write('\n');
    this.midLine = false;
    this.giveOut();
  }

  /** What came of `reply`, marked, as one piece waiting to be given out. */
  private release(reply: R, after = ''): void {
    const held = this.held.get(reply);
    this.held.delete(reply);
    if (!held?.text) return;
    const left = held.notHeld ? ` … (${held.notHeld} more characters not shown)` : '';
    this.queue(`↪ ${held.text.replace(/\n$/, '')}${left}${after}\n`);
  }

  /** Past MAX_QUEUED in all, a piece is only counted. */
  private queue(text: string): void {
    if (this.queuedChars + text.length > MAX_QUEUED) {
      this.leftOut += 1;
      return;
    }
    this.queuedChars += text.length;
    this.queued.push(text);
  }

  private giveOut(): void {
    if (this.midLine) return;
    for (const text of this.queued.splice(0)) this.write(text);
    if (this.leftOut > 0) this.write(`↪ … (${this.leftOut} more from elsewhere not shown)\n`);
    this.queuedChars = 0;
    this.leftOut = 0;
  }
}
