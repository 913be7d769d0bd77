/**
 * A model server's address as a person types it to `homed init`: a bare `host:port` (with a
 * path or not) is taken as http://, the way the server prints it; anything else must be an
 * http(s) URL. Pure.
 */
import { baseUrlProblem } from '../actors/settings/baseUrl.ts';

/** `host:port[/path]`, the host a name, an IPv4 address or a bracketed IPv6 one, and nothing that could be a user or a query. */
const HOST_PORT = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?:\/[^\s?#@]*)?$/;

/** Signs of a credential in the text (a user:password@ part, a key in a query): the value is then never repeated. */
const MAY_CARRY_A_SECRET = /[@?]/;

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
  if (problem === null) return { url, assumedHttp: bare };
  // An http(s) URL with something else wrong (credentials in it) is told as the settings' rule tells it.
  if (/^https?:$/.test(protocolOf(url) ?? '')) return { problem };
  const named = MAY_CARRY_A_SECRET.test(text) ? 'the server URL given' : `'${text}'`;
  return { problem: `${named} is not an http(s) URL; give the server's address, e.g. ${example}` };
};

const protocolOf = (url: string): string | undefined => {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
};
