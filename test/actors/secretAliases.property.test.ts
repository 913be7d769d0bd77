/**
 * Filling and scrubbing aliases against a real vault, for any text: every `@{NAME}` of a secret
 * set for the tool becomes its value and nothing else changes (as a regular-expression
 * replacement reads the aliases), unknown and withheld names are reported and kept as
 * aliases, arguments without an alias come back as they were, and scrubbing a filled call gives
 * back its aliases. The turn's decision, made from the vault's grants alone before the call
 * leaves, is the fill's: the same secrets filled, or the same refusal.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SecretVault } from '../../adapters/secrets/secretVault.ts';
import { SecretAliases } from '../../actors/security/secretAliases.ts';
import { ALIAS, decideFill, fillRefusal, keptToolsGrant } from '../../machines/security/index.ts';
import { useTempDir } from '../support/tempDir.ts';

const tempDir = useTempDir();

const SECRETS: Readonly<Record<string, Readonly<{ value: string; tools: string[] }>>> = {
  API_KEY: { value: 'sk-fill-property-4417aa', tools: ['files_*'] },
  GH: { value: 'ghp_property_99e1c0d2', tools: ['files_write'] },
  ELSEWHERE: { value: 'elsewhere-only-6610', tools: ['web_*'] },
};

const aliasesOf = (dir: string): SecretAliases => {
  const vault = SecretVault.open(dir);
  for (const [name, { value, tools }] of Object.entries(SECRETS)) vault.set(name, value, tools);
  return new SecretAliases(dir);
};

const piece = fc.oneof(
  fc.constantFrom(
    '@{API_KEY}',
    '@{GH}',
    '@{ELSEWHERE}',
    '@{MISSING}',
    '@{',
    '@{@{GH}}',
    '@{api_key}',
    '}',
    '@',
    ' ',
    // The longest name an alias may have, and one character more (no alias).
    `@{L${'O'.repeat(63)}}`,
    `@{L${'O'.repeat(64)}}`,
  ),
  fc.string({ maxLength: 8 }),
);
const text = fc.array(piece, { maxLength: 10 }).map((parts) => parts.join(''));
const tool = fc.constantFrom('files_read', 'files_write', 'web_fetch', 'shell_run');

/** The reference: one global replacement with the alias pattern. */
const expectedFill = (input: string, name: string) => {
  const filled = new Set<string>();
  const unknown = new Set<string>();
  const withheld = new Set<string>();
  const out = input.replace(new RegExp(ALIAS.source, 'g'), (alias, secret: string) => {
    const known = SECRETS[secret];
    if (!known) unknown.add(secret);
    else if (!known.tools.some((glob) => new RegExp(`^${glob.replace('*', '.*')}$`).test(name))) withheld.add(secret);
    else {
      filled.add(secret);
      return known.value;
    }
    return alias;
  });
  return { out, filled: [...filled].sort(), unknown: [...unknown].sort(), withheld: [...withheld].sort() };
};

/**
 * `bytes` (a value with `before` and `after` around it) in base64, scrubbed, hold the alias of
 * `name`, and what is left decodes to no more than a few bits of the value on either side of it.
 */
const expectScrubbedInBase64 = (aliases: SecretAliases, name: string, bytes: Buffer, before: Buffer, after: Buffer, urlSafe: boolean) => {
  const scrubbed = aliases.scrub(`data: ${bytes.toString(urlSafe ? 'base64url' : 'base64')}`);
  expect(scrubbed).toContain(`@{${name}}`);
  const left = scrubbed.slice('data: '.length).split(`@{${name}}`);
  for (const part of left) expect(part.length).toBeLessThanOrEqual(Math.ceil(((before.length + after.length + 2) * 8) / 6) + 2);
};

describe('secret aliases', () => {
  it('fill replaces exactly the aliases of secrets set for the tool, and reports the others', () => {
    const aliases = aliasesOf(tempDir());
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 3 }), tool, (first, rest, name) => {
        const args = { first, nested: { rest } };
        const before = structuredClone(args);
        const got = aliases.fill(args, name);
        expect(args).toEqual(before);
        const expectedFirst = expectedFill(first, name);
        const expectedRest = rest.map((item) => expectedFill(item, name));
        expect(got.args).toEqual({ first: expectedFirst.out, nested: { rest: expectedRest.map((r) => r.out) } });
        const all = [expectedFirst, ...expectedRest];
        for (const key of ['filled', 'unknown', 'withheld'] as const) {
          expect(got[key]).toEqual([...new Set(all.flatMap((r) => r[key]))].sort());
        }
        if (!JSON.stringify(args).includes('@{')) expect(got.args).toBe(args);
        expect(aliases.scrub(JSON.stringify(got.args))).toBe(aliases.scrub(JSON.stringify(args)));
        const refusal = fillRefusal(got, (secret) => aliases.toolsOf(secret), name, 'message');
        const named = got.filled.length + got.unknown.length + got.withheld.length > 0;
        expect(decideFill(aliases.grants(), undefined, name, args)).toEqual(
          !named ? { kind: 'none' } : refusal === undefined ? { kind: 'fill', secrets: got.filled } : { kind: 'refuse', reason: refusal },
        );
      }),
      { numRuns: 1_000 },
    );
  });

  // Red team round 11: a secret granted to '*' was filled into memory_commit, and so into the log, the memory and what
  // subscribed plugins received.
  it("never fills a secret into the kernel's memory, cold context or timer tools, whatever its grant", () => {
    const grants = [{ name: 'EVERY', tools: ['*'] }];
    for (const tool of ['memory_commit', 'memory_recall', 'coldcontext_commit', 'timer_set']) {
      expect(decideFill(grants, undefined, tool, { note: 'remember @{EVERY}' })).toEqual({
        kind: 'refuse',
        reason: expect.stringContaining(`a secret is never filled into ${tool}`),
      });
      // Without an alias, the call is none of the vault's business.
      expect(decideFill(grants, undefined, tool, { note: 'remember this' })).toEqual({ kind: 'none' });
    }
    expect(decideFill(grants, undefined, 'files_write', { content: '@{EVERY}' })).toEqual({ kind: 'fill', secrets: ['EVERY'] });
  });

  it('refuses a grant whose every tool is one that keeps what it is given, and lets a wider glob be', () => {
    for (const globs of [['timer_set'], ['http_get', 'memory_*'], ['coldcontext_c?mmit']]) {
      expect(keptToolsGrant(globs)).toMatch(/^a secret is never filled into (timer_set|memory_\*|coldcontext_c\?mmit): /);
    }
    for (const globs of [['*'], ['tim*'], ['http_get', 'files_*'], ['timer'], ['memory']]) expect(keptToolsGrant(globs)).toBeUndefined();
  });

  it('keeps a key named __proto__ an own argument, filled like any other', () => {
    const aliases = aliasesOf(tempDir());
    const args = JSON.parse('{"__proto__": {"token": "@{GH}"}, "path": "a.txt"}') as Record<string, unknown>;
    const { args: filled } = aliases.fill(args, 'files_write');
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, '__proto__')).toBe(true);
    expect(JSON.stringify(filled)).toBe(`{"__proto__":{"token":"${SECRETS.GH!.value}"},"path":"a.txt"}`);
  });

  it('scrubs a value written as JSON writes it inside a string, quotes and backslashes escaped', () => {
    const dir = tempDir();
    SecretVault.open(dir).set('QUOTED', 'pa"ss\\wQUOTEDsecret', ['echo_*']);
    const aliases = new SecretAliases(dir);
    const { args } = aliases.fill({ q: '@{QUOTED}' }, 'echo_args');
    const answer = JSON.stringify({ args });
    expect(answer).not.toContain('@{QUOTED}');
    expect(aliases.scrub(answer)).toBe('{"args":{"q":"@{QUOTED}"}}');
    expect(aliases.scrub(`raw ${String(args.q)}`)).toBe('raw @{QUOTED}');
  });

  // The hostile tester's tool handed a filled value back as Python's json.dumps writes it, with
  // '/' escaped, and as JSON inside JSON: none was scrubbed.
  // Red team round 11: a PEM key stored with \n came back whole through a tool ending its lines in \r\n.
  it('scrubs a value of several lines whichever line breaks write it, as it is and as JSON writes it', () => {
    const dir = tempDir();
    const pem = '-----BEGIN KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\nq7BFUpkGp3+XQ7e0\n-----END KEY-----';
    SecretVault.open(dir).set('PEM', pem);
    SecretVault.open(dir).set('CRLF', pem.replaceAll('\n', '\r\n').replace('KEY', 'OTHER'));
    const aliases = new SecretAliases(dir);
    const crlf = pem.replaceAll('\n', '\r\n');
    expect(aliases.scrub(`key: ${crlf} end`)).toBe('key: @{PEM} end');
    expect(aliases.scrub(JSON.stringify({ key: crlf }))).toBe('{"key":"@{PEM}"}');
    expect(aliases.scrub(`key: ${pem.replace('KEY', 'OTHER')} end`)).toBe('key: @{CRLF} end');
  });

  it('scrubs a value as other JSON writers write it: non-ASCII as \\uXXXX, / as \\/, and JSON inside JSON', () => {
    const dir = tempDir();
    const value = 'Pa"ss/wörd+K3y=\\9Zq';
    SecretVault.open(dir).set('PW', value, ['echo_*']);
    const aliases = new SecretAliases(dir);
    const json = JSON.stringify({ p: value });
    const python = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(aliases.scrub(python)).toBe('{"p":"@{PW}"}');
    expect(aliases.scrub(json.replaceAll('/', '\\/'))).toBe('{"p":"@{PW}"}');
    expect(aliases.scrub(JSON.stringify({ wrapped: json }))).toBe(JSON.stringify({ wrapped: '{"p":"@{PW}"}' }));
    // A plugin's JSON with '/' escaped, quoted again (the second tester's stray stdout, as a complaint quotes it).
    expect(aliases.scrub(JSON.stringify(json.replaceAll('/', '\\/')))).toBe(JSON.stringify('{"p":"@{PW}"}'));
    expect(aliases.scrub('nothing here')).toBe('nothing here');
  });

  // A tool given a value can hand it back encoded: as base64 (alone or inside a longer encoded
  // text, at any of the three places in a group of three), hex, in a URL or a form, or as HTML.
  // PowerShell and Windows tools encode text as UTF-16 before base64 ([Text.Encoding]::Unicode);
  // `rev` hands a value back written backwards: the red team got one past the scrub each way.
  it('scrubs a value encoded as base64 or hex of its UTF-16 (either byte order), anywhere in a longer encoding, and written backwards', () => {
    const dir = tempDir();
    const values: Readonly<Record<string, string>> = { TOKEN: 'sk-live-4f9a77c2e1', WIDE: 'clé-🔑-sécrète' };
    const vault = SecretVault.open(dir);
    for (const [name, value] of Object.entries(values)) vault.set(name, value, ['echo_*']);
    const aliases = new SecretAliases(dir);
    const utf16 = (value: string, bigEndian: boolean): Buffer => {
      const units = Buffer.from(value, 'utf16le');
      return bigEndian ? units.swap16() : units;
    };
    const bytes = fc.uint8Array({ maxLength: 7 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.entries(values)),
        bytes,
        bytes,
        fc.boolean(),
        fc.boolean(),
        ([name, value], before, after, bigEndian, urlSafe) =>
          expectScrubbedInBase64(aliases, name, Buffer.concat([before, utf16(value, bigEndian), after]), before, after, urlSafe),
      ),
      { numRuns: 500 },
    );
    for (const [name, value] of Object.entries(values)) {
      const backwards = [...value].reverse().join('');
      expect(aliases.scrub(`rev: ${backwards}.`)).toBe(`rev: @{${name}}.`);
      expect(aliases.scrub(JSON.stringify({ out: backwards }))).toBe(JSON.stringify({ out: `@{${name}}` }));
      for (const bigEndian of [false, true]) {
        const hex = utf16(value, bigEndian).toString('hex');
        // .NET's Convert.ToHexString writes upper case.
        for (const written of [hex, hex.toUpperCase(), utf16(value, bigEndian).toString('base64')]) {
          expect(aliases.scrub(`[${written}]`), written).toBe(`[@{${name}}]`);
        }
      }
    }
  });

  it("scrubs a value as Go's JSON escapes <, > and &, and as hex with its bytes apart (openssl's ':', .NET's '-', spaces); an easy value backwards is left, being too often a word", () => {
    const dir = tempDir();
    const vault = SecretVault.open(dir);
    vault.set('PW', 'pa&ss<wo>rd99', ['echo_*']);
    vault.set('PIN', 'live', ['echo_*']);
    vault.set('NET', 'badnet', ['echo_*']);
    const aliases = new SecretAliases(dir);
    expect(aliases.scrub('{"password":"pa\\u0026ss\\u003cwo\\u003erd99"}')).toBe('{"password":"@{PW}"}');
    const hex = Buffer.from('pa&ss<wo>rd99').toString('hex');
    for (const separator of [':', '-', ' ']) {
      const apart = hex.match(/../g)!.join(separator);
      expect(aliases.scrub(`bytes ${apart}.`), separator).toBe('bytes @{PW}.');
      expect(aliases.scrub(`bytes ${apart.toUpperCase()}.`), separator).toBe('bytes @{PW}.');
    }
    expect(aliases.scrub('99dr>ow<ss&ap')).toBe('@{PW}');
    expect(aliases.scrub('live and evil')).toBe('@{PIN} and evil');
    expect(aliases.scrub('Extendable, not badnet')).toBe('Extendable, not @{NET}');
  });

  it('scrubs a value encoded as base64 anywhere in a longer encoding, as hex, in a URL or a form, and as HTML', () => {
    const dir = tempDir();
    const values: Readonly<Record<string, string>> = {
      TOKEN: 'sk-live-4f9a77c2e1',
      PHRASE: 'pass word/with+&<"odd">?=chars',
      WIDE: 'clé-🔑-sécrète',
      TINY: 'k3y!',
    };
    const vault = SecretVault.open(dir);
    for (const [name, value] of Object.entries(values)) vault.set(name, value, ['echo_*']);
    const aliases = new SecretAliases(dir);
    const bytes = fc.uint8Array({ maxLength: 7 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.entries(values).filter(([name]) => name !== 'TINY')),
        bytes,
        bytes,
        fc.boolean(),
        ([name, value], before, after, urlSafe) =>
          expectScrubbedInBase64(aliases, name, Buffer.concat([before, Buffer.from(value), after]), before, after, urlSafe),
      ),
      { numRuns: 1_000 },
    );
    for (const [name, value] of Object.entries(values)) {
      const hex = Buffer.from(value).toString('hex');
      expect(aliases.scrub(`hex ${hex} HEX ${hex.toUpperCase()}`)).toBe(`hex @{${name}} HEX @{${name}}`);
      if (value === values.PHRASE || value === values.WIDE) {
        expect(aliases.scrub(`https://x.test/?q=${encodeURIComponent(value)}&n=1`)).toBe(`https://x.test/?q=@{${name}}&n=1`);
      }
    }
    expect(aliases.scrub(`q=${encodeURIComponent(values.PHRASE!).replaceAll('%20', '+')}`)).toBe('q=@{PHRASE}');
    expect(aliases.scrub('<b>pass word/with+&amp;&lt;&quot;odd&quot;&gt;?=chars</b>')).toBe('<b>@{PHRASE}</b>');
    // As other encoders write them: Python's quote keeps '/', escapes in lower case, HTML quotes as numbers, JSON's \u in upper case.
    const phrase = values.PHRASE!;
    for (const written of [
      encodeURIComponent(phrase).replaceAll('%2F', '/'),
      encodeURIComponent(phrase).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
      'pass word/with+&amp;&lt;&#34;odd&#34;&gt;?=chars',
    ]) {
      expect(aliases.scrub(`[${written}]`), written).toBe('[@{PHRASE}]');
    }
    expect(
      aliases.scrub(
        JSON.stringify(values.WIDE).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`),
      ),
    ).toBe('"@{WIDE}"');
    // Encoders wrap their lines (base64 at 76 or 64, xxd -p at 60): a value cut by a line break is found all the same,
    // in the text and in the text as a model streams it; no run of eight of its encoded characters is left.
    const cores = (value: string): string[] =>
      [0, 1, 2].map((shift) => {
        const bytes = Buffer.concat([Buffer.alloc(shift), Buffer.from(value)]);
        return bytes.toString('base64').slice(Math.ceil((8 * shift) / 6), Math.floor((8 * bytes.length) / 6));
      });
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.entries(values).filter(([name]) => name !== 'TINY')),
        bytes,
        fc.integer({ min: 4, max: 80 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 5 }),
        ([name, value], before, width, eol, hex, cuts) => {
          const encoded = hex
            ? Buffer.concat([before, Buffer.from(value)]).toString('hex')
            : Buffer.concat([before, Buffer.from(value)]).toString('base64');
          const text = `${encoded.match(new RegExp(`.{1,${width}}`, 'g'))!.join(eol)}${eol}`;
          const scrubbed = aliases.scrub(text);
          expect(scrubbed).toContain(`@{${name}}`);
          const joined = scrubbed.replace(/\r?\n/g, '');
          const leaks = hex ? [Buffer.from(value).toString('hex')] : cores(value);
          for (const core of leaks) for (let i = 0; i + 8 <= core.length; i++) expect(joined).not.toContain(core.slice(i, i + 8));
          const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const stream = aliases.streamScrub();
          const parts = [0, ...at].map((from, i) => text.slice(from, [...at, text.length][i]));
          expect(parts.map((part) => stream.push(part)).join('') + stream.end()).toBe(scrubbed);
        },
      ),
      { numRuns: 1_000 },
    );
    // Any text in any pieces, line breaks and lone carriage returns among forms cut at random
    // (the second tester's 'ab\r' then a hex form over a line break was scrubbed in the stream and
    // not in the whole): what the stream lets out, joined, is the whole text scrubbed.
    const forms = Object.values(values).flatMap((value) => [Buffer.from(value).toString('hex'), Buffer.from(value).toString('base64')]);
    const piece = fc.oneof(
      fc.constantFrom(...forms).chain((form) => fc.nat(form.length).map((cut) => `${form.slice(0, cut)}\n${form.slice(cut)}`)),
      fc.constantFrom(...forms),
      fc.string({ unit: fc.constantFrom('a', 'B', '7', '+', '=', ' ', '\r', '\n', '\r\n', '.'), maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (pieces, cuts) => {
        const text = pieces.join('');
        const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const stream = aliases.streamScrub();
        const parts = [0, ...at].map((from, i) => text.slice(from, [...at, text.length][i]));
        expect(parts.map((part) => stream.push(part)).join('') + stream.end()).toBe(aliases.scrub(text));
      }),
      { numRuns: 3_000 },
    );
    expect(
      aliases.scrub(
        `ab\r${Buffer.from(values.TOKEN!).toString('hex').slice(0, 24)}\n${Buffer.from(values.TOKEN!).toString('hex').slice(24)}`,
      ),
    ).toBe(
      (() => {
        const stream = aliases.streamScrub();
        const hex = Buffer.from(values.TOKEN!).toString('hex');
        return stream.push('ab\r') + stream.push(`${hex.slice(0, 24)}\n${hex.slice(24)}`) + stream.end();
      })(),
    );
    // A 4-character value encoded alone (padded or not, either alphabet) or ending an encoding is found;
    // inside a longer encoding it has at most 5 characters of its own, too few to be told from other text.
    for (const encoding of ['base64', 'base64url'] as const) {
      const alone = Buffer.from(values.TINY!).toString(encoding);
      expect(aliases.scrub(`key ${alone}.`)).toBe('key @{TINY}.');
      expect(aliases.scrub(`key ${alone.replace(/=+$/, '')} and ${alone}`)).toBe('key @{TINY} and @{TINY}');
    }
    expect(aliases.scrub(Buffer.from(`abc${values.TINY}`).toString('base64'))).toBe('YWJj@{TINY}');
    expect(aliases.scrub('azN5 and azN5I')).toBe('azN5 and azN5I');
  });

  // With 20 more secrets the scrub has more than 16 forms to look for, and looks for them in one pass.
  it.each([0, 20])(
    'leaves no value in clear, overlapping or nested ones included, and changes nothing where none is (%i more secrets)',
    (more) => {
      const dir = tempDir();
      const vault = SecretVault.open(dir);
      const values: Readonly<Record<string, string>> = { AA: 'ALPHAsecretBETA', BB: 'BETAgammaDELTA', INNER: 'secret', QQ: 'q"uo\\te' };
      for (const [name, value] of Object.entries(values)) vault.set(name, value, ['files_*']);
      for (let i = 0; i < more; i++) vault.set(`MORE_${i}`, `more/"value-${i}-never-in-the-text`, ['files_*']);
      const aliases = new SecretAliases(dir);
      const all = Object.values(values).flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
      const piece = fc.oneof(
        fc.constantFrom(...all),
        fc.constantFrom(...all).chain((value) => fc.integer({ min: 0, max: value.length }).map((cut) => value.slice(0, cut))),
        fc.constantFrom(...all).chain((value) => fc.integer({ min: 0, max: value.length }).map((cut) => value.slice(cut))),
        fc.stringMatching(/^[A-Za-z "\\]{0,6}$/),
      );
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
          const text = pieces.join('');
          const scrubbed = aliases.scrub(text);
          for (const value of all) expect(scrubbed).not.toContain(value);
          if (!all.some((value) => text.includes(value))) expect(scrubbed).toBe(text);
        }),
        { numRuns: 2_000 },
      );
      // The same text in pieces, as a model streams it: what the stream scrub lets out, joined, is the whole text scrubbed.
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (pieces, cuts) => {
          const text = pieces.join('');
          const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const parts = [0, ...at].map((from, i) => text.slice(from, [...at, text.length][i]));
          const stream = aliases.streamScrub();
          const streamed = parts.map((part) => stream.push(part)).join('') + stream.end();
          expect(streamed).toBe(aliases.scrub(text));
        }),
        { numRuns: 2_000 },
      );
      // Two values that overlap become both aliases; one inside another is the other's.
      expect(aliases.scrub('xALPHAsecretBETAgammaDELTA!')).toBe('x@{AA}@{BB}!');
      expect(aliases.scrub('a secret in ALPHAsecretBETA')).toBe('a @{INNER} in @{AA}');
    },
  );

  // The hostile tester's tool kept the value it was given; after a rotation it handed it back,
  // and the old value reached the log and the model.
  it('goes on scrubbing a value rotated or removed, as its name, after a restart too, but fills only the current one', () => {
    const dir = tempDir();
    const vault = SecretVault.open(dir);
    vault.set('ROT', 'tok-old-value-0123', ['echo_*']);
    const aliases = new SecretAliases(dir);
    expect(aliases.scrub('kept tok-old-value-0123')).toBe('kept @{ROT}');
    vault.set('ROT', 'tok-new-value-4567', ['echo_*']);
    expect(aliases.scrub('kept tok-old-value-0123, now tok-new-value-4567')).toBe('kept @{ROT}, now @{ROT}');
    expect(aliases.fill({ v: '@{ROT}' }, 'echo_it').args).toEqual({ v: 'tok-new-value-4567' });
    vault.remove('ROT');
    expect(aliases.scrub('"tok-old-value-0123" "tok-new-value-4567"')).toBe('"@{ROT}" "@{ROT}"');
    expect(aliases.fill({ v: '@{ROT}' }, 'echo_it').unknown).toEqual(['ROT']);
    // The vault keeps them: so does a daemon started afresh.
    expect(new SecretAliases(dir).scrub('tok-old-value-0123 tok-new-value-4567')).toBe('@{ROT} @{ROT}');
    // A value set again under another name is that name's.
    vault.set('AGAIN', 'tok-old-value-0123');
    expect(aliases.scrub('tok-old-value-0123')).toBe('@{AGAIN}');
  });

  // A hostile tester's plugin named a schema's property with a value it was filled, and a handler's rewritten
  // argument: the key reached the model, the log and the web UI in clear.
  it('scrubs keys as it scrubs strings, at any depth, and gives back what holds no value as it was', () => {
    const aliases = aliasesOf(tempDir());
    const values = Object.values(SECRETS).map((s) => s.value);
    const word = fc.oneof(fc.constantFrom(...values, '__proto__', 'role', 'content'), fc.string({ maxLength: 6 }));
    const key = fc.array(word, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(''));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, word, fc.integer(), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
      object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((entries) => Object.fromEntries(entries)),
    })).value;
    fc.assert(
      fc.property(json, (value) => {
        const scrubbed = aliases.scrubDeep(value);
        const written = JSON.stringify(scrubbed);
        for (const secret of values) expect(written).not.toContain(secret);
        if (!values.some((secret) => JSON.stringify(value).includes(secret))) expect(scrubbed).toBe(value);
        else expect(JSON.stringify(aliases.scrubDeep(JSON.parse(JSON.stringify(value))))).toBe(written);
      }),
      { numRuns: 300 },
    );
    // As JSON brings it: __proto__ an own key, kept one, never the prototype.
    const schema = JSON.parse(`{"type":"object","properties":{"${SECRETS.GH!.value}":{"type":"string"},"__proto__":{"type":"number"}}}`);
    const scrubbed = aliases.scrubDeep(schema);
    expect(JSON.stringify(scrubbed)).toBe('{"type":"object","properties":{"@{GH}":{"type":"string"},"__proto__":{"type":"number"}}}');
    expect(Object.getPrototypeOf(scrubbed.properties)).toBe(Object.prototype);
  });
});
