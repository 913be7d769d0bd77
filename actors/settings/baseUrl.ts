/** What a model source's baseUrl may be: http(s), and no credentials in it. */

/** Query parameters that carry credentials by their name. */
const CREDENTIAL_PARAM = /key|token|secret|password|passwd|auth|sig/i;

/** A URL-like text with all before its last '@' (after the scheme) and its query cut out. */
const shownWithoutCredentials = (text: string): string =>
  text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, (_, scheme: string | undefined) => `${scheme ?? ''}…@`).replace(/\?.*$/s, '?…');

/**
 * What is wrong with a source's baseUrl, or null. A URL that carries credentials (userinfo or
 * a key-like query parameter) is refused and never repeated in the message: the key belongs
 * in `apiKey` or `apiKeyEnv`, which are kept out of logs and errors.
 */
export const baseUrlProblem = (url: unknown): string | null => {
  if (typeof url !== 'string') return 'baseUrl must be a URL string, like http://127.0.0.1:11434';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Unparsed, it may still hold a user:password@ part or a key: shown without them.
    return `baseUrl '${shownWithoutCredentials(url)}' is not a URL`;
  }
  if (parsed.username || parsed.password || [...parsed.searchParams.keys()].some((name) => CREDENTIAL_PARAM.test(name))) {
    return 'baseUrl carries credentials (a user:password@ part or a key in the query); remove them and put the key in apiKey or apiKeyEnv';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `baseUrl must start with http:// or https://, not ${parsed.protocol}`;
  return null;
};
