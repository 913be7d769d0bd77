/**
 * A model server's address as a person types it to `homed init`: a bare `host:port` (with a
 * path or not) is taken as http://, the way the server prints it; anything else must be an
 * http(s) URL. Pure.
 */
import { baseUrlProblem } from '../actors/settings/baseUrl.ts';

/** `host:port[/path]`, the host a name, an IPv4 address or a bracketed IPv6 one, and nothing that could be a user or a query. */
const HOST_PORT = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?:\/[^\s?#@]*)?$/;

/**
 * What is repeated back of a refused value: only what reads as an address (up to 100 address
 * characters, with a '.', ':' or '/', or a short name like 'localhost'); anything else may be a
 * key pasted in the wrong place, a page of junk or a terminal's escape sequence, and is not echoed.
 */
const SHOWN_AS_TYPED = /^(?:(?=.*[.:/])[A-Za-z0-9.:/_[\]-]{1,100}|[A-Za-z0-9_-]{1,24})$/;

export type ServerUrl = Readonly<{ url: string; assumedHttp: boolean }> | Readonly<{ problem: string }>;

/**
 * The URL `given` stands for, with `assumedHttp` when http:// was put before a bare host:port,
 * or the problem to tell the person, naming the value (unless it may carry a secret) and an example.
 *
 * @example serverUrlFrom('localhost:8765', 'http://127.0.0.1:8000/v1') // { url: 'http://localhost:8765', assumedHttp: true }
 */
export const serverUrlFrom = (given: string, example: string): ServerUrl => {
  const text = given.trim();
  const bare = HOST_PORT.test(text);
  const url = bare ? `http://${text}` : text;
  const problem = baseUrlProblem(url);
  // new URL() mends 'http:/x' and 'http:x' into http://x/: a person typing that meant something else.
  if (problem === null && (bare || /^https?:\/\/[^/]/i.test(text))) return { url, assumedHttp: bare };
  // An http(s) URL with something else wrong (credentials in it) is told as the settings' rule tells it.
  if (problem !== null && /^https?:$/.test(protocolOf(url) ?? '')) return { problem };
  const named = SHOWN_AS_TYPED.test(text) ? `'${text}'` : `the server URL given (${text.length} characters)`;
  return { problem: `${named} is not an http(s) URL; give the server's address, e.g. ${example}` };
};

const protocolOf = (url: string): string | undefined => {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
};
