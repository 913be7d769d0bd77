/** The script: replies taken in order, or by the first matching predicate; each is used once unless `repeat`. */
import type { MatchedReply, RecordedRequest, Script, ScriptEntry, ScriptedReply } from './types.ts';

const isMatched = (entry: ScriptEntry): entry is MatchedReply => 'when' in entry && 'reply' in entry;

export type Taken = { readonly reply: ScriptedReply } | { readonly exhausted: string };

export class ScriptQueue {
  private entries: ScriptEntry[];
  private used = 0;

  constructor(script: Script = []) {
    this.entries = [...script];
  }

  replace(script: Script): void {
    this.entries = [...script];
  }

  /** The reply for `request`, or why there is none. */
  take(request: RecordedRequest): Taken {
    const at = this.entries.findIndex((entry) => !isMatched(entry) || entry.when(request));
    const entry = at < 0 ? undefined : this.entries[at];
    if (entry === undefined) {
      const where = `request #${request.index} (${request.method} ${request.path})`;
      return {
        exhausted:
          this.entries.length === 0
            ? `llmServer script exhausted: ${where} found no scripted reply left after ${this.used} used; add replies with setScript()`
            : `llmServer script has no reply for ${where}: none of the ${this.entries.length} remaining replies matched; check their 'when' predicates`,
      };
    }
    if (!isMatched(entry) || entry.repeat !== true) this.entries.splice(at, 1);
    this.used += 1;
    if (!isMatched(entry)) return { reply: entry };
    return { reply: typeof entry.reply === 'function' ? entry.reply(request) : entry.reply };
  }
}
