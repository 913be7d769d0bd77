/**
 * `homed secret set|list|rm`: the data dir's credential vault. A value is read from stdin (typed
 * without echo in a terminal, or piped), never taken as an argument, so it stays out of the shell
 * history and the process list; only names are ever printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { globMatches, keptToolsGrant } from '../machines/security/index.ts';
import { SETTINGS_FILE } from '../actors/modules/config.ts';
import { modelSourcesOf } from '../actors/settings/modelSourceKeys.ts';
import { guessableWarning } from '../adapters/secrets/guessableSecret.ts';
import { checkSecretName, LONGEST_SECRET_BYTES, SecretVault, SecretVaultError } from '../adapters/secrets/secretVault.ts';
import { closestNames } from '../events/closestNames.ts';
import { parse } from './args.ts';
import { CliClient, replyOfType } from './cliClient.ts';
import { Cancelled, UsageError } from './cliErrors.ts';
import { dataDirFrom, existingDataDir, prepareDataDir } from './dataDir.ts';

/** The built-in tool that puts a value in a file, which files_read hands back in parts (offset, limit) that no scrub knows. */
const FILE_WRITER = 'files_write';

export const SECRET_HELP = `Usage: homed secret set NAME [--tools GLOBS] [--keep-sources] [--data DIR]    the value comes on stdin
       homed secret list [--data DIR]        names, and the tools each may be filled into
       homed secret rm NAME [--data DIR]

The data dir's credential vault: values are encrypted at rest in DIR/secrets/vault.json with a
key made at first use (DIR/secrets/vault.key, 0600). Keep both, or the secrets cannot be opened.
In a terminal 'set' asks for the value without showing it; otherwise it reads all of stdin
(spaces and line ends around it removed):  printf %s "$KEY" | homed secret set OPENAI_KEY
A model source uses one with "apiKeySecret": "OPENAI_KEY" in llm.sources (settings.json).
A tool gets one when its call says @{NAME}, filled in right before it runs, and only a tool
named by --tools (comma-separated names or globs, e.g. --tools 'http_get,github_*'); a secret
set without --tools is never filled into a tool call. A change applies from your next message.
Wherever else a value appears it is replaced by @{NAME}, a value 'set' replaced or 'rm' removed
too (the vault keeps the newest 64, sealed).
NAME: 1–64 capital letters, digits and '_', starting with a letter. A value: UTF-8 text, 4
characters to 64 KiB.
A secret the web UI set, which saved model sources send somewhere, is replaced only with
--keep-sources: the page chose those servers when it knew the value it had set, so 'set' first
shows them, to be checked in settings.json.
`;

const tooLong = (name: string): SecretVaultError =>
  new SecretVaultError(`the value for ${name} is longer than ${LONGEST_SECRET_BYTES / 1024} KiB; a secret is a key, a token or a password`);

/** Reads the value: without echo from a terminal, else all of stdin without its last newline. */
const readValue = async (name: string): Promise<string> => {
  const input = process.stdin;
  if (!input.isTTY) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of input) {
      size += (chunk as Buffer).length;
      // Read no further than a value could be (with its line end): a file piped by mistake is not held whole.
      if (size > LONGEST_SECRET_BYTES + 2) throw tooLong(name);
      chunks.push(chunk as Buffer);
    }
    let text: string;
    try {
      // A byte-order mark is kept here, so that the trim below leaves it out and says so.
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
    } catch {
      throw new SecretVaultError(
        `the value for ${name} on stdin is not UTF-8 text; a secret is text (a key, a token, a password), stored as it is given`,
      );
    }
    return text.replace(/\r?\n$/, '');
  }
  process.stderr.write(`value for ${name} (not shown): `);
  input.setRawMode(true);
  input.resume();
  return new Promise<string>((resolve, reject) => {
    let value = '';
    const done = (error?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new Cancelled('cancelled: nothing was stored'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    input.on('data', onData);
  });
};

/** `--tools a,b*`: tool names or globs, each 1–64 letters, digits, '_', '-', '*' or '?'. */
const toolGlobs = (given: string | undefined): string[] => {
  if (given === undefined) return [];
  const globs = given.split(',').map((g) => g.trim());
  const bad = globs.find((g) => !/^[A-Za-z0-9_*?-]{1,64}$/.test(g));
  if (bad !== undefined) throw new UsageError(`--tools takes tool names or globs separated by commas; '${bad}' is not one`);
  const kept = keptToolsGrant(globs);
  if (kept !== undefined) throw new UsageError(`--tools: ${kept}`);
  return globs;
};

/** Where the model sources of DIR/settings.json send vault key `name`: each source's server and name. */
const sourcesSending = (dir: string, name: string): string[] => {
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(join(dir, SETTINGS_FILE), 'utf8'));
  } catch {
    return []; // no settings, or ones homed refuses at start anyway
  }
  return modelSourcesOf(settings)
    .filter(({ key }) => key?.kind === 'apiKeySecret' && key.ref === name)
    .map((source) => `${source.baseUrl ?? '(no baseUrl)'} (source ${source.name ?? '?'})`);
};

/**
 * A key the web UI set may be sent anywhere the page chose (whoever set it knows it); once the
 * owner puts their own value in its place, the servers the page chose would get that. A red team
 * set a key from the page, saved a source sending it to their server, and waited for the owner
 * to set the real one. So that is done only once the owner has seen where it goes.
 * @throws SecretVaultError naming the servers, unless `keep`
 */
const refuseOverPageKey = (dir: string, name: string, keep: boolean): void => {
  if (keep || !SecretVault.open(dir).setFromPage(name)) return;
  const servers = sourcesSending(dir, name);
  if (servers.length === 0) return;
  throw new SecretVaultError(
    `${name} was set from the web UI, and the saved model sources send it to ${servers.join(', ')}: the page chose ` +
      `where, knowing the value it set; check them in ${join(dir, SETTINGS_FILE)}, then run again with --keep-sources to give them yours`,
  );
};

/**
 * Warnings for the names and globs of `--tools` that match no tool of the daemon running on `dir`
 * (none when none runs): a misspelt tool would never be given the secret, and a newcomer learnt it
 * only at the next start. Ask the daemon it is; what it does not answer is not guessed at.
 */
const toolsNotRunning = async (dir: string, globs: readonly string[]): Promise<string[]> => {
  if (globs.length === 0) return [];
  const client = await CliClient.connect(dir, { forTerminal: false }).catch(() => undefined);
  if (!client) return [];
  try {
    const names = (await client.ask({ type: 'tools' }, replyOfType('tools'))).tools.map((t) => t.name);
    return globs
      .filter((glob) => !names.some((name) => globMatches(glob, name)))
      .map((glob) => {
        const [near] = /[*?]/.test(glob) ? [] : closestNames(glob, names, 1);
        return (
          `warning: --tools ${glob} matches no tool homed has now${near ? ` (did you mean ${near}?)` : ''}; ` +
          'the secret is filled only into tools of the names --tools gives'
        );
      });
  } catch {
    return [];
  } finally {
    client.close();
  }
};

export const secretCommand = async (args: string[], write: (text: string) => void): Promise<number> => {
  const { values, positionals } = parse(
    args,
    { data: { type: 'string' }, tools: { type: 'string' }, 'keep-sources': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    true,
  );
  if (values.help || positionals.length === 0) {
    write(SECRET_HELP.trimEnd());
    return values.help ? 0 : 2;
  }
  const [action, name, ...extra] = positionals;
  /** The vault of the data dir, which must exist (starting homed or `homed init` makes it); `set` checks that it can write there. */
  const vault = (writing = false) => {
    const dir = existingDataDir(dataDirFrom(values.data));
    if (writing) prepareDataDir(dir);
    return SecretVault.open(dir);
  };
  const needName = (): string => {
    if (name === undefined) throw new UsageError(`homed secret ${action} needs the secret's NAME`);
    if (extra.length > 0) {
      throw new UsageError(`homed secret ${action} takes one NAME; the value is read from stdin, never from the command line`);
    }
    try {
      checkSecretName(name);
    } catch (error) {
      // A name that is not one is a mistake on the command line, told as such (exit 2).
      throw new UsageError((error as Error).message);
    }
    return name;
  };
  switch (action) {
    case 'set': {
      const secret = needName();
      const tools = toolGlobs(values.tools);
      const dir = existingDataDir(dataDirFrom(values.data)); // refused before the value is asked for
      refuseOverPageKey(dir, secret, values['keep-sources'] === true);
      const typed = await readValue(secret);
      // A key pasted with a space or a line end around it would be sent so, and never scrubbed as typed alone.
      const value = typed.trim();
      vault(true).set(secret, value, tools);
      write(
        (value !== typed ? 'left out the spaces and line ends around the value; ' : '') +
          `stored ${secret}; refer to it as "apiKeySecret": "${secret}" (a model source reads its key at start: restart homed after changing it)` +
          (tools.length ? `, or as @{${secret}} in a call of ${tools.join(', ')} (used from your next message on, no restart)` : ''),
      );
      const guessable = guessableWarning(secret, value);
      if (guessable) write(guessable);
      for (const line of await toolsNotRunning(dir, tools)) write(line);
      const writer = tools.find((glob) => globMatches(glob, FILE_WRITER));
      if (writer !== undefined) {
        write(
          `warning: --tools ${writer} lets the value be written to a file, and files_read hands a file back in parts ` +
            '(offset, limit) that no scrub knows: the model could read it piece by piece; name the tools that pass it on whole',
        );
      }
      return 0;
    }
    case 'list': {
      if (name !== undefined) throw new UsageError('homed secret list takes no NAME');
      const open = vault();
      const names = open.names();
      const line = (n: string) => (open.toolsOf(n).length ? `${n}  (tools: ${open.toolsOf(n).join(', ')})` : n);
      write(names.length === 0 ? 'no secrets stored' : names.map(line).join('\n'));
      return 0;
    }
    case 'rm': {
      const secret = needName();
      if (!vault().remove(secret)) throw new SecretVaultError(`no secret ${secret} in the vault (homed secret list shows the names)`);
      write(`removed ${secret}`);
      return 0;
    }
    default:
      throw new UsageError(`unknown action '${action}'; use set, list or rm`);
  }
};
