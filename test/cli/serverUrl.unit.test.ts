/** `homed init`'s server address: a bare host:port taken as http://, anything else an http(s) URL or refused with an example. */
import { describe, expect, it } from 'vitest';
import { serverUrlFrom } from '../../cli/serverUrl.ts';

const EXAMPLE = 'http://127.0.0.1:8000/v1';

describe('serverUrlFrom', () => {
  it.each([
    ['localhost:8765', 'http://localhost:8765'],
    ['127.0.0.1:8000/v1', 'http://127.0.0.1:8000/v1'],
    ['[::1]:11434', 'http://[::1]:11434'],
    ['gpu-box.lan:8000/v1/', 'http://gpu-box.lan:8000/v1/'],
  ])('takes the bare host:port %s as %s', (given, url) => {
    expect(serverUrlFrom(given, EXAMPLE)).toEqual({ url, assumedHttp: true });
  });

  it('keeps an http(s) URL as it is', () => {
    expect(serverUrlFrom('https://api.anthropic.com', EXAMPLE)).toEqual({ url: 'https://api.anthropic.com', assumedHttp: false });
    expect(serverUrlFrom(' http://127.0.0.1:11434 ', EXAMPLE)).toEqual({ url: 'http://127.0.0.1:11434', assumedHttp: false });
  });

  it.each(['localhost', 'ftp://127.0.0.1:21', 'localhost:port', 'file:///etc/passwd', 'http:/x', 'http:x', 'HTTP:/127.0.0.1:80'])(
    'refuses %s, naming it, with an example',
    (given) => {
      expect(serverUrlFrom(given, EXAMPLE)).toEqual({
        problem: `'${given}' is not an http(s) URL; give the server's address, e.g. ${EXAMPLE}`,
      });
    },
  );

  it('repeats nothing that may be a key, junk or a terminal escape: it says how long it was', () => {
    const key = 'sk-ant-api03-SECRETSECRETSECRET';
    for (const given of [key, 'not a url', 'x'.repeat(10_000), '\u001b]0;pwned\u0007localhost:1']) {
      const result = serverUrlFrom(given, EXAMPLE);
      expect(result).toEqual({
        problem: `the server URL given (${given.length} characters) is not an http(s) URL; give the server's address, e.g. ${EXAMPLE}`,
      });
    }
  });

  it('never repeats a value that may carry a credential', () => {
    for (const given of [
      'me:sk-x@127.0.0.1:9/v1',
      'http://me:sk-x@127.0.0.1:9/v1',
      '127.0.0.1:9/v1?key=sk-x',
      'http://h:1/?api_key=sk-x',
    ]) {
      const result = serverUrlFrom(given, EXAMPLE);
      expect(result).toHaveProperty('problem');
      expect(JSON.stringify(result)).not.toContain('sk-x');
    }
  });
});
