/**
 * The cli socket's wire: newline-delimited JSON over a Unix socket at `<dataDir>/homed.sock`,
 * so any tool (`nc -U`) can speak it. One request per line from the client; the server answers
 * each in order and streams replies to the session that sent the message. Every limit a
 * client can reach is named here, and reaching one is answered with an `error` reply.
 */
import type { PendingApprovalSummary, PluginSummary } from '../../sdk/builtinPlugin.ts';

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
  // One decimal, or two where one would read as the limit itself (1.04 MiB is not '1.0 MiB').
  const unit = (size: number, name: string) => {
    const value = bytes / size;
    const shown = bytes % size === 0 ? `${value}` : value.toFixed(1).endsWith('.0') ? value.toFixed(2) : value.toFixed(1);
    return `${shown} ${name}`;
  };
  if (bytes >= 1024 * 1024) return unit(1024 * 1024, 'MiB');
  if (bytes >= 1024) return unit(1024, 'KiB');
  return `${bytes} bytes`;
};

export type CliRequest =
  /** `from` names who is talking (waiter sends the OS user): their conversation continues across sessions. */
  | Readonly<{ type: 'message'; text: string; from?: string }>
  /** Says who is here before any message, so what arrives for them (a reminder) reaches this session; answered `welcome`. */
  | Readonly<{ type: 'hello'; from?: string }>
  | Readonly<{ type: 'stop' }>
  /**
   * Stops one input by its id (running, waiting, or waiting for approval), not the others, whichever
   * session sent it: every session on the socket is the owner's. Answered `cancelled`, `stopped`
   * false when there was nothing to stop (it ended, or never was).
   */
  | Readonly<{ type: 'cancel'; inputId: string }>
  | Readonly<{ type: 'tools' }>
  | Readonly<{ type: 'plugins' }>
  | Readonly<{ type: 'plugin'; action: 'enable' | 'disable' | 'reload' | 'start' | 'stop'; name: string }>
  /** The calls waiting for approval; answered `approvals`. */
  | Readonly<{ type: 'approvals' }>
  /** Approves or refuses a waiting call (`reason` is told to the model on a refusal); answered `answered`. */
  | Readonly<{ type: 'approve'; approval: string; approved: boolean; reason?: string }>;

/**
 * Replies. `inputId` on `chunk`, `tool`, `end` and `message` names the input a reply answers: a
 * session also receives replies it did not ask for (a reminder for its user, a message the model
 * sent to the cli channel), and a client tells them apart by it.
 */
export type CliReply =
  | Readonly<{ type: 'accepted'; inputId: string }>
  /** The answer to `hello`: this session, its conversation, and the model sources the daemon asks. */
  | Readonly<{ type: 'welcome'; session: string; conversation: string; models: readonly { name: string; model: string }[] }>
  /** A piece of a streamed reply. */
  | Readonly<{ type: 'chunk'; text: string; inputId?: string }>
  /** A tool started for a reply (`name`). */
  | Readonly<{ type: 'tool'; name: string; inputId?: string }>
  /** The reply is complete; `outcome` says what it was (`failed`: `text` says why; `cancelled`: stopped, `stoppedFor` why). */
  | Readonly<{ type: 'end'; text: string; outcome?: string; stoppedFor?: string; inputId?: string }>
  /**
   * Something the model sent to the cli channel with output_send__cli, the note that a queued
   * message waits, or (with `approval`, its id) a call of the reply waiting for a person's approval.
   */
  | Readonly<{ type: 'message'; text: string; inputId?: string; approval?: string }>
  | Readonly<{ type: 'stopped'; running?: boolean; waiting?: number; parked?: number }>
  | Readonly<{ type: 'cancelled'; inputId: string; stopped: boolean }>
  | Readonly<{ type: 'tools'; tools: readonly { name: string; plugin: string; description: string }[] }>
  | Readonly<{ type: 'plugins'; plugins: readonly PluginSummary[] }>
  | Readonly<{ type: 'plugin'; plugin: PluginSummary }>
  | Readonly<{ type: 'approvals'; pending: readonly PendingApprovalSummary[] }>
  | Readonly<{ type: 'answered'; approval: string; approved: boolean }>
  | Readonly<{ type: 'error'; message: string; code?: CliErrorCode }>;

const ACTIONS = ['enable', 'disable', 'reload', 'start', 'stop'];
/** Who is talking: the OS user name waiter sends; it names the conversation (`cli:<from>`). */
const USER_NAME = /^[\w.@-]{1,64}$/;
/** The user of a session that never said. */
export const ANONYMOUS = 'local';

/** A reply target on the cli channel: the user and the session (`alice/k3f9-s2`), so a reply outlives its session. */
export const cliTarget = (from: string, session: string): string => `${from}/${session}`;
/** The user and the session a target names; a target of another shape names neither. */
export const parseCliTarget = (target: string): { from: string; session: string } | undefined => {
  const slash = target.indexOf('/');
  return slash > 0 ? { from: target.slice(0, slash), session: target.slice(slash + 1) } : undefined;
};

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
    case 'hello': {
      if (r.type === 'message' && (typeof r.text !== 'string' || !r.text.trim())) return { error: "'message' needs a non-empty 'text'" };
      if (r.from !== undefined && (typeof r.from !== 'string' || !USER_NAME.test(r.from))) {
        return { error: "'from' must be a user name (1–64 letters, digits, . _ @ -)" };
      }
      const from = typeof r.from === 'string' ? { from: r.from } : {};
      return r.type === 'hello' ? { type: 'hello', ...from } : { type: 'message', text: r.text as string, ...from };
    }
    case 'cancel':
      return typeof r.inputId === 'string' && r.inputId.length > 0 && r.inputId.length <= 200
        ? { type: 'cancel', inputId: r.inputId }
        : { error: "'cancel' needs the 'inputId' of a message this client sent" };
    case 'stop':
    case 'tools':
    case 'plugins':
    case 'approvals':
      return { type: r.type };
    case 'approve':
      if (typeof r.approval !== 'string' || !r.approval || r.approval.length > 200 || typeof r.approved !== 'boolean') {
        return { error: "'approve' needs 'approval' (an id from 'approvals') and 'approved' (true or false)" };
      }
      if (r.reason !== undefined && (typeof r.reason !== 'string' || r.reason.length > 2000)) {
        return { error: "'reason' must be a string of at most 2000 characters" };
      }
      return { type: 'approve', approval: r.approval, approved: r.approved, ...(typeof r.reason === 'string' ? { reason: r.reason } : {}) };
    case 'plugin':
      return typeof r.name === 'string' && ACTIONS.includes(r.action as string)
        ? { type: 'plugin', action: r.action as 'enable', name: r.name }
        : { error: `'plugin' needs 'name' and 'action' (one of ${ACTIONS.join(', ')})` };
    default:
      return {
        error: `unknown request type ${JSON.stringify(r?.type)}; use message, hello, stop, cancel, tools, plugins, plugin, approvals or approve`,
      };
  }
};
