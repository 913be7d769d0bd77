/**
 * Secrets by alias: `@{NAME}` stands for the vault's secret NAME everywhere outside the tool
 * call that needs it. Filling swaps aliases in a call's arguments for the values right before
 * it runs; scrubbing swaps every value found in text back to its alias. The vault is read again
 * when its file changes, so `homed secret set` takes effect without a restart: once `watch` is
 * called its folder is watched and a change there marks it to be read again (a call then costs
 * no file system call); unwatched, or where the folder cannot be watched, every call looks at
 * the file. A name a call asks for that the vault as last read lacks is looked for afresh.
 */
import { type FSWatcher, mkdirSync, statSync, watch } from 'node:fs';
import { join } from 'node:path';
import { SECRETS_DIR, SecretVault, SHORTEST_SECRET, VAULT_FILE } from '../../adapters/secrets/secretVault.ts';
import {
  aliasNameAt,
  aliasOf,
  type AliasesMet,
  type Found,
  finderOf,
  findAcrossLines,
  globMatches,
  lineAfter,
  type Needles,
  NEW_LINE,
  openAcrossLines,
  type SecretGrant,
} from '../../machines/security/index.ts';

import { writtenForms } from '../../adapters/secrets/writtenForms.ts';

/**
 * A call's arguments with the secrets it may have filled in, and what became of each alias it
 * named; `forms`, the values as the vault held them when it filled, for scrubbing the call's result
 * even if the vault changes while the call runs.
 */
export type Filled = AliasesMet & Readonly<{ args: Record<string, unknown>; forms?: Needles }>;

export class SecretAliases {
  private values: ReadonlyMap<string, string> = new Map();
  /** The tools each secret may be filled into. */
  private tools: ReadonlyMap<string, readonly string[]> = new Map();
  /** Each secret's value in each way it is written, with its name, longest first (a value containing another is replaced whole). */
  private byLength: Needles = [];
  /** Whether a secret may be filled into a tool, by tool then secret name, as the vault was last read. */
  private allowed = new Map<string, Map<string, boolean>>();
  private stamp = '';
  /** Set while the watcher vouches that nothing in the vault's folder changed since the last read. */
  private trusted = false;
  private watched: Readonly<{ watcher: FSWatcher; ino: number }> | undefined;
  /** Values held outside the vault, scrubbed as their names but never filled. */
  private readonly outside = new Map<string, string>();

  constructor(private readonly dataDir: string) {}

  /**
   * Watches the vault's folder (made, 0700, if there is none yet) so that calls need not look at
   * the file. @returns whether the folder is watched; when it is not, every call looks as before.
   */
  watch(): boolean {
    this.close();
    const dir = join(this.dataDir, SECRETS_DIR);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const watcher = watch(dir, { persistent: false }, () => this.changed());
      watcher.on('error', () => this.close());
      this.watched = { watcher, ino: statSync(dir).ino };
    } catch {
      this.watched = undefined;
    }
    this.trusted = false;
    return this.watched !== undefined;
  }

  /** Stops watching; every call looks at the file again. */
  close(): void {
    this.watched?.watcher.close();
    this.watched = undefined;
    this.trusted = false;
  }

  /** Something in the vault's folder changed, or the folder itself went: read again, and watch the folder now there. */
  private changed(): void {
    this.trusted = false;
    if (!this.watched) return;
    let ino = -1;
    try {
      ino = statSync(join(this.dataDir, SECRETS_DIR)).ino;
    } catch {
      // the folder went: watch the one made in its place
    }
    if (ino !== this.watched.ino) this.watch();
  }

  /** The secrets' names and values, read again if the vault file changed since the last call. */
  private current(): ReadonlyMap<string, string> {
    if (this.trusted) return this.values;
    const path = join(this.dataDir, SECRETS_DIR, VAULT_FILE);
    let stamp = 'none';
    try {
      const stat = statSync(path);
      stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    } catch {
      // no vault yet: no secrets
    }
    if (stamp !== this.stamp) this.load(stamp);
    this.trusted = this.watched !== undefined;
    return this.values;
  }

  private load(stamp: string): void {
    const vault = stamp === 'none' ? undefined : SecretVault.open(this.dataDir);
    const values = new Map((vault?.names() ?? []).map((name) => [name, vault!.get(name)] as const));
    this.values = values;
    this.tools = new Map((vault?.names() ?? []).map((name) => [name, vault!.toolsOf(name)] as const));
    // A value is also looked for as JSON writes it inside a string (a tool answering in JSON escapes '"' and '\\').
    // A value the vault held before (rotated or removed) is scrubbed too, as the name it had:
    // a tool or a handler that kept it would otherwise hand it back in clear.
    // Each value once: the current name's, else the newest it was retired under.
    const seen = new Set(values.values());
    const outside = [...this.outside].filter(([, value]) => !seen.has(value) && seen.add(value));
    const retired = [...(vault?.retired() ?? [])].reverse().filter(([, value]) => !seen.has(value) && seen.add(value));
    this.byLength = [...values, ...outside, ...retired]
      .filter(([, v]) => v.length >= SHORTEST_SECRET)
      .flatMap(([name, v]) => writtenForms(v).map((form) => [name, form] as const))
      .sort((a, b) => b[1].length - a[1].length);
    this.allowed = new Map();
    this.stamp = stamp;
  }

  /** Scrubs `value` as `@{name}` from the next look on, though the vault does not hold it; it is never filled. */
  scrubAlso(name: string, value: string): void {
    this.outside.set(name, value);
    this.stamp = '';
    this.trusted = false;
  }

  /** The plaintext of `name`. @throws SecretVaultError naming what to run when there is none. */
  secret(name: string): string {
    const value = this.current().get(name);
    return value ?? SecretVault.open(this.dataDir).get(name);
  }

  /**
   * `text` with every secret value replaced by its alias; `fresh: false` trusts the vault as last
   * read (one call's second look); `also`, values the vault may no longer hold (a fill's `forms`).
   */
  scrub(text: string, { fresh = true, also }: Readonly<{ fresh?: boolean; also?: Needles | undefined }> = {}): string {
    if (fresh) this.current();
    const found = this.occurrences(text);
    if (also && also !== this.byLength) findAcrossLines(finderOf(also), text, found, this.byLength.length);
    return found.length > 0 ? aliasesOver(text, found) : text;
  }

  /**
   * `text`, cut short at its end, scrubbed and without that end where it could begin a value (in
   * any of its written forms): the rest of such a value is gone, so no scrub would know it for one.
   */
  scrubCut(text: string): string {
    const scrubbed = this.scrub(text);
    return scrubbed.slice(0, openAcrossLines(finderOf(this.byLength), scrubbed));
  }

  private occurrences(text: string): Found[] {
    return findAcrossLines(finderOf(this.byLength), text, []);
  }

  /**
   * A scrub for text that arrives in pieces (a model's streamed reply): `push` returns what can be
   * let out, scrubbed, holding back the end that could still be the start of a value (in any of
   * its written forms) split across pieces; `end` lets out the rest. What comes out, joined, is the whole text scrubbed.
   */
  streamScrub(): Readonly<{ push: (piece: string) => string; end: () => string }> {
    this.current();
    const finder = finderOf(this.byLength);
    let held = '';
    // Whether a line break is an encoder's wrapping depends on the whole line before it, part of which may have been let out.
    let line = NEW_LINE;
    return {
      push: (piece) => {
        held += piece;
        // Every value that starts before this cut has arrived whole; one that runs across it is
        // held with the rest (and so are the values overlapping it), so no run of them is split.
        let cut = openAcrossLines(finder, held, line);
        const found = findAcrossLines(finder, held, [], 0, line);
        for (let moved = true; moved; ) {
          moved = false;
          for (const { start, end } of found) {
            if (start < cut && end > cut) {
              cut = start;
              moved = true;
            }
          }
        }
        // The values before the cut are those already found there: no second search.
        const before = found.filter((f) => f.start < cut);
        const out = before.length > 0 ? aliasesOver(held.slice(0, cut), before) : held.slice(0, cut);
        line = lineAfter(line, held.slice(0, cut));
        held = held.slice(cut);
        return out;
      },
      end: () => {
        const found = findAcrossLines(finder, held, [], 0, line);
        const out = found.length > 0 ? aliasesOver(held, found) : held;
        held = '';
        line = NEW_LINE;
        return out;
      },
    };
  }

  /** Every string inside `value` scrubbed (the objects and arrays holding a changed string copied, the rest as they are). */
  scrubDeep<T>(value: T): T {
    this.current();
    if (this.byLength.length === 0) return value;
    // No form of a value fits in a shorter string, wrapped or not: most keys and many strings are passed over.
    const shortest = this.byLength.at(-1)![1].length;
    return mapChangedStrings(value, (text) => (text.length < shortest ? text : this.scrub(text, { fresh: false }))) as T;
  }

  /** The tools `name` may be filled into (names or globs). */
  toolsOf(name: string): readonly string[] {
    this.current();
    return this.tools.get(name) ?? [];
  }

  /** Every secret's name with the tools it may be filled into, by name: what a turn decides its fills from. */
  grants(): readonly SecretGrant[] {
    this.current();
    return [...this.tools].map(([name, tools]) => ({ name, tools: [...tools] })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /**
   * `args` of a call of `tool` with each alias of a known secret replaced by its value; names the
   * vault does not hold, and secrets not set for this tool, are listed and left as aliases.
   */
  fill(args: Readonly<Record<string, unknown>>, tool: string): Filled {
    const trusted = this.trusted;
    const filled = this.fillFrom(args, tool);
    if (!trusted || (filled.unknown.length === 0 && filled.withheld.length === 0)) return filled;
    // The watcher may not have told of a `homed secret set` made a moment ago: look at the file.
    this.trusted = false;
    return this.fillFrom(args, tool);
  }

  /** Whether secret `name` may be filled into `tool`, remembered until the vault is read again. */
  private mayFill(name: string, tool: string): boolean {
    let byName = this.allowed.get(tool);
    if (!byName) {
      byName = new Map();
      this.allowed.set(tool, byName);
    }
    let allowed = byName.get(name);
    if (allowed === undefined) {
      allowed = (this.tools.get(name) ?? []).some((glob) => globMatches(glob, tool));
      byName.set(name, allowed);
    }
    return allowed;
  }

  /**
   * The vault is looked at only once an alias is found: a call without one costs no look. A fill
   * runs once a call, too seldom for the engine to optimise it, so what it allocates and calls is
   * what it costs: one closure, and the walk's plain loops.
   */
  private fillFrom(args: Readonly<Record<string, unknown>>, tool: string): Filled {
    const met: Met = { filled: [], unknown: [], withheld: [] };
    const filledArgs = mapChangedStrings(args, (text) => this.fillText(text, tool, met)) as Record<string, unknown>;
    return {
      args: filledArgs,
      filled: met.filled.sort(),
      unknown: met.unknown.sort(),
      withheld: met.withheld.sort(),
      ...(met.forms ? { forms: met.forms } : {}),
    };
  }

  /** `text` with each alias of a secret set for `tool` replaced by its value; the names met listed in `met`. */
  private fillText(text: string, tool: string, met: Met): string {
    let replaced = '';
    let copied = 0;
    for (let at = text.indexOf('@{'); at >= 0; at = text.indexOf('@{', at + 2)) {
      const name = aliasNameAt(text, at);
      if (name === undefined) continue;
      if (!met.values) {
        met.values = this.current();
        met.forms = this.byLength;
      }
      const value = met.values.get(name);
      const list = value === undefined ? met.unknown : this.mayFill(name, tool) ? met.filled : met.withheld;
      if (!list.includes(name)) list.push(name);
      if (list !== met.filled) continue;
      replaced += text.slice(copied, at) + value;
      copied = at + name.length + 3;
    }
    return copied === 0 ? text : replaced + text.slice(copied);
  }
}

/** The alias names one fill met, by what became of them, and the vault as the fill first looked at it. */
type Met = {
  readonly filled: string[];
  readonly unknown: string[];
  readonly withheld: string[];
  values?: ReadonlyMap<string, string>;
  forms?: Needles;
};

/**
 * `text` with each run of found values replaced: a value inside another is the other's, and
 * values that overlap become both aliases, so no part of either is left in clear.
 */
const aliasesOver = (text: string, found: Found[]): string => {
  // Longest first where two start together (byLength's order breaks ties), then left to right.
  found.sort((x, y) => x.start - y.start || y.end - x.end || x.rank - y.rank);
  let out = '';
  let copied = 0;
  let end = -1;
  for (const { start, end: stop, name } of found) {
    if (start >= end) {
      out += text.slice(copied, start);
      end = start;
    }
    if (stop <= end) continue;
    out += aliasOf(name);
    end = stop;
    copied = stop;
  }
  return out + text.slice(copied);
};

/** `value` with every string inside it mapped, keys too; only the objects and arrays holding a changed string are copied. */
const mapChangedStrings = (value: unknown, map: (text: string) => string): unknown => {
  if (typeof value === 'string') return map(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const mapped = mapChangedStrings(value[i], map);
      if (mapped === value[i]) continue;
      copy ??= [...value];
      copy[i] = mapped;
    }
    return copy ?? value;
  }
  const keys = Object.keys(value);
  // A key is text a plugin or a model writes too (a schema's property, a handler's rewritten argument): one that
  // changes has the object rebuilt with every key mapped, in its order (fromEntries defines __proto__ as a key).
  if (keys.some((key) => map(key) !== key)) {
    return Object.fromEntries(keys.map((key) => [map(key), mapChangedStrings((value as Record<string, unknown>)[key], map)]));
  }
  let copy: Record<string, unknown> | undefined;
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    const mapped = mapChangedStrings(item, map);
    if (mapped === item) continue;
    copy ??= { ...value };
    // The spread made every key an own property, __proto__ too: this assignment never sets a prototype.
    copy[key] = mapped;
  }
  return copy ?? value;
};
