/**
 * The cli socket's wire: newline-delimited JSON over a Unix socket at `<dataDir>/homed.sock`,
 * so any tool (`nc -U`) can speak it. One request per line from the client; the server answers
 * each in order and streams replies to the session that sent the message. Every limit a
 * client can reach is named here, and reaching one is answered with an `error` reply.
 */
import type { PluginSummary } from '../../sdk/builtinPlugin.ts';

export const CLI_SOCKET_FILE = 'homed.sock';

/** Longest request line (bytes, without its newline); a longer one is refused and its connection closed. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** Connections served at once; one more is answered `busy` and closed. */
export const MAX_CLI_CLIENTS = 256;
/** A session's messages waiting for their reply's end; its next message is read only when one ends. */
export const MAX_PENDING_MESSAGES = 4;
/** Replies a client has not read yet, above which its next requests are not read. */
export const OUTPUT_HIGH_WATER_BYTES = 256 * 1024;
/** Replies a client has not read yet, above which it is dropped (a streaming reply cannot wait for it). */
export const MAX_UNREAD_OUTPUT_BYTES = 8 * 1024 * 1024;

/** Why a request was refused: `bad_request` (fix the line), `line_too_long` and `busy` (the connection is closed), `failed` (the daemon could not do it). */
export type CliErrorCode = 'bad_request' | 'line_too_long' | 'busy' | 'failed';

/** "1 MiB", "9.5 MiB", "256 KiB", "300 bytes": a size as a person reads it. */
export const formatBytes = (bytes: number): string => {
  const unit = (size: number, name: string) => `${bytes % size === 0 ? bytes / size : (bytes / size).toFixed(1)} ${name}`;
  if (bytes >= 1024 * 1024) return unit(1024 * 1024, 'MiB');
  if (bytes >= 1024) return unit(1024, 'KiB');
  return `${bytes} bytes`;
};

export type CliRequest =
  /** `from` names who is talking (waiter sends the OS user): their conversation continues across sessions. */
  | Readonly<{ type: 'message'; text: string; from?: string }>
  | Readonly<{ type: 'stop' }>
  | Readonly<{ type: 'tools' }>
  | Readonly<{ type: 'plugins' }>
  | Readonly<{ type: 'plugin'; action: 'enable' | 'disable' | 'reload' | 'start' | 'stop'; name: string }>;

export type CliReply =
  | Readonly<{ type: 'accepted'; inputId: string }>
  /** A piece of the streamed reply to this session's message. */
  | Readonly<{ type: 'chunk'; text: string }>
  /** The reply is complete; `outcome` says what it was (`failed`: `text` says why; `cancelled`: stopped). */
  | Readonly<{ type: 'end'; text: string; outcome?: string }>
  /** Something the model sent to the cli channel with output_send__cli. */
  | Readonly<{ type: 'message'; text: string }>
  | Readonly<{ type: 'stopped' }>
  | Readonly<{ type: 'tools'; tools: readonly { name: string; plugin: string; description: string }[] }>
  | Readonly<{ type: 'plugins'; plugins: readonly PluginSummary[] }>
  | Readonly<{ type: 'plugin'; plugin: PluginSummary }>
  | Readonly<{ type: 'error'; message: string; code?: CliErrorCode }>;

const ACTIONS = ['enable', 'disable', 'reload', 'start', 'stop'];

/** Parses one client line; a bad line is a message for the client, never a crash. */
export const parseCliRequest = (line: string): CliRequest | { error: string } => {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: `not JSON: ${line.slice(0, 80)}` };
  }
  const r = value as Record<string, unknown>;
  switch (r?.type) {
    case 'message':
      if (typeof r.text !== 'string' || !r.text.trim()) return { error: "'message' needs a non-empty 'text'" };
      if (r.from !== undefined && (typeof r.from !== 'string' || !/^[\w.@-]{1,64}$/.test(r.from))) {
        return { error: "'from' must be a user name (letters, digits, . _ @ -)" };
      }
      return { type: 'message', text: r.text, ...(typeof r.from === 'string' ? { from: r.from } : {}) };
    case 'stop':
    case 'tools':
    case 'plugins':
      return { type: r.type };
    case 'plugin':
      return typeof r.name === 'string' && ACTIONS.includes(r.action as string)
        ? { type: 'plugin', action: r.action as 'enable', name: r.name }
        : { error: `'plugin' needs 'name' and 'action' (one of ${ACTIONS.join(', ')})` };
    default:
      return { error: `unknown request type ${JSON.stringify(r?.type)}; use message, stop, tools, plugins or plugin` };
  }
};
