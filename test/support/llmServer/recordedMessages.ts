/** What a recorded chat request asked: its messages, its last user text, whether it follows a tool result. */
import type { RecordedRequest } from './types.ts';

export type RecordedMessage = Readonly<{ role: string; content?: unknown }>;

/** The request's `messages` (none when the body has no such list). */
export const messagesOf = (request: RecordedRequest): readonly RecordedMessage[] =>
  (request.body as { messages?: RecordedMessage[] } | undefined)?.messages ?? [];

/** The text of the request's last user message: what a scripted reply answers ('' when none is text). */
export const lastUserText = (request: RecordedRequest): string => {
  const content = messagesOf(request)
    .filter((m) => m.role === 'user')
    .at(-1)?.content;
  return typeof content === 'string' ? content : '';
};

/** Whether the request's last message is a tool result: the model is asked to go on after a tool. */
export const afterToolResult = (request: RecordedRequest): boolean => messagesOf(request).at(-1)?.role === 'tool';
