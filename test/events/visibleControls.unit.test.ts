/** Text from homed on a terminal: control characters shown, never obeyed. */
import { describe, expect, it } from 'vitest';
import { oneVisibleLine, visibleControls, withVisibleControls } from '../../events/visibleControls.ts';

describe('visibleControls', () => {
  it('shows each control character but line feed and tab as its symbol', () => {
    expect(visibleControls('a\x1b]0;OWNED\x07b')).toBe('a␛]0;OWNED␇b');
    expect(visibleControls('\x1b[8mhidden\x1b[0m')).toBe('␛[8mhidden␛[0m');
    expect(visibleControls('safe\rrm -rf ~')).toBe('safe␍rm -rf ~');
    expect(visibleControls('\x00\x08\x7f\u009b')).toBe('␀␈␡\ufffd');
    expect(visibleControls('line one\n\tline two')).toBe('line one\n\tline two');
  });

  it('leaves out the carriage return of a CRLF line end, and leaves text without controls as it is', () => {
    expect(visibleControls('one\r\ntwo\r\n')).toBe('one\ntwo\n');
    const plain = 'Grüße, 世界 — “quoted” ✓';
    expect(visibleControls(plain)).toBe(plain);
  });

  it('reaches every string of a parsed reply, keys and numbers untouched', () => {
    const reply = JSON.parse('{"type":"chunk","text":"x\\u001b[2Jy","n":1,"list":["\\u0007"]}', withVisibleControls);
    expect(reply).toEqual({ type: 'chunk', text: 'x␛[2Jy', n: 1, list: ['␇'] });
  });

  // A plugin's log line forged 'homed:' lines, retitled the window and ran to a megabyte (found by the hostile tester).
  it("makes someone else's text one line of output: breaks shown, controls visible, cut where it is too long", () => {
    expect(oneVisibleLine('innocent\nhomed: stopped\x1b]0;pwned\x07', 100)).toBe('innocent⏎homed: stopped␛]0;pwned␇');
    expect(oneVisibleLine('x'.repeat(1_000_025), 8_192)).toBe(`${'x'.repeat(8_192)}… (991,833 more characters)`);
    // Its end kept where asked, the middle left out: a failure's reason says what to do last.
    expect(oneVisibleLine(`start${'x'.repeat(500)}then run it again`, 40, 16)).toBe(
      `start${'x'.repeat(19)}… (482 more characters) …hen run it again`,
    );
    // Red team round 11: a line separator and a right-to-left override passed as they were.
    expect(oneVisibleLine('z\u2028homed: forged \u202eesrever\u202c end', 100)).toBe('z⏎homed: forged ⟨U+202E⟩esrever⟨U+202C⟩ end');
  });
});
