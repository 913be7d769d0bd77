/** What one receiver of a reply (a cli session, a plugin's channel target) got for one input, as it got it. */

export type ReplyEnd = Readonly<{ text: string; outcome: string | undefined }>;

export type ReceivedReply = {
  /** The input the reply answers, as the kernel named it when it accepted it ('' until then). */
  inputId: string;
  /** Who received it, for a report: `cli s3`, `probe i2`. */
  readonly via: string;
  readonly chunks: string[];
  end: ReplyEnd | undefined;
  /** Deliveries that should not have come: anything after the end, or one that is neither a chunk nor an end. */
  readonly unexpected: string[];
  /** The receiver is gone (it left, or the daemon stopped or died under it): nothing more is recorded. */
  gone: boolean;
};

export const newReceivedReply = (via: string): ReceivedReply => ({
  inputId: '',
  via,
  chunks: [],
  end: undefined,
  unexpected: [],
  gone: false,
});

/** Records one delivery, unless the receiver is gone. */
export const receive = (reply: ReceivedReply, kind: string, text: string, outcome?: string): void => {
  if (reply.gone) return;
  if (reply.end) reply.unexpected.push(`${kind} ${JSON.stringify(text)} after the end`);
  else if (kind === 'chunk') reply.chunks.push(text);
  else if (kind === 'end') reply.end = { text, outcome };
  else reply.unexpected.push(`${kind} ${JSON.stringify(text)}`);
};

/** A receiver that stayed from its input to the end of its reply: what it got can be held against the log. */
export const stayedToTheEnd = (reply: ReceivedReply): boolean => reply.end !== undefined;
