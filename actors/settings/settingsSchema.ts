/**
 * Every setting of settings.json, its shape and what it does: the one schema the daemon,
 * `homed chat` and `homed replay` check settings against (defaults live with the code that
 * reads each setting). A module that reads a new setting adds it here.
 */
import { BUILTIN_ADAPTERS } from '../../adapters/llm/luaAdapter.ts';
import { SECRET_NAME } from '../../adapters/secrets/secretVault.ts';
import { FINDING_RULES } from '../../events/index.ts';
import { allProjections } from '../../projections/index.ts';
import { baseUrlProblem } from './baseUrl.ts';
import type { SettingsField } from './settingsField.ts';

const timeZoneProblem = (zone: string): string | null =>
  zone === 'UTC' || Intl.supportedValuesOf('timeZone').includes(zone)
    ? null
    : `'${zone}' is not an IANA time zone; use a name like "Europe/Paris" or "UTC"`;

/** What may stand where a web server listens: a host name or an IPv4 or IPv6 address (bracketed or not). */
const LISTEN_HOST = /^[A-Za-z0-9.:[\]-]{1,253}$/;

const listenHostProblem = (host: string): string | null =>
  LISTEN_HOST.test(host)
    ? null
    : `${JSON.stringify(host.slice(0, 60))} is not an address to listen on; give one such as "127.0.0.1" (this machine only) or "0.0.0.0" (every network)`;

/** The shortest interval a loop takes (0.6 s): shorter ones would have it fire on every look, filling the log. */
export const SHORTEST_HEARTBEAT_MINUTES = 0.01;

const minutes = (loop: string): SettingsField => ({
  type: 'number',
  min: SHORTEST_HEARTBEAT_MINUTES,
  doc: `minutes between two runs of the ${loop} loop (at least ${SHORTEST_HEARTBEAT_MINUTES})`,
});

/** What a tool may be named (as plugins register tools), with `*` and `?` for a glob. */
const TOOL_GLOB = /^[A-Za-z0-9_*?-]{1,64}$/;

/** A rule that names no tool there could be would quietly deny or allow nothing: refused instead. */
const toolGlobProblem = (glob: string): string | null =>
  TOOL_GLOB.test(glob)
    ? null
    : `${JSON.stringify(glob.slice(0, 70))} names no tool: a tool's name is letters, digits, '_' and '-' (a glob adds * and ?), with no spaces`;

const toolGlob = (example: string): SettingsField => ({
  type: 'string',
  nonEmpty: true,
  check: toolGlobProblem,
  doc: `a tool name or glob ('${example}')`,
});

const toolRules = (doc: string): SettingsField => ({
  type: 'object',
  doc,
  fields: {
    allow: { type: 'list', of: toolGlob('files_*'), doc: 'when given, only these tools (an empty list: none)' },
    deny: { type: 'list', of: toolGlob('memory_*'), doc: 'never these tools' },
    approve: { type: 'list', of: toolGlob('files_write'), doc: 'each call waits for your /approve' },
  },
});

const llmSource: SettingsField = {
  type: 'object',
  doc: 'one model source; the sources are asked in order',
  required: ['adapter', 'baseUrl'],
  exclusive: ['apiKey', 'apiKeySecret', 'apiKeyEnv'],
  fields: {
    name: { type: 'string', nonEmpty: true, doc: 'how logs and errors name the source' },
    adapter: { type: 'enum', values: BUILTIN_ADAPTERS, doc: 'the wire protocol' },
    baseUrl: {
      type: 'string',
      check: (url) => baseUrlProblem(url),
      doc: 'the server, e.g. http://127.0.0.1:8000/v1 (OpenAI-compatible) or http://127.0.0.1:11434 (Ollama)',
    },
    model: { type: 'string', nonEmpty: true, doc: "the model's name on that server" },
    apiKey: { type: 'string', doc: 'the key itself (prefer apiKeySecret or apiKeyEnv)' },
    apiKeySecret: {
      type: 'string',
      check: (name) => (SECRET_NAME.test(name) ? null : 'is not a secret name (capital letters, digits and _, as homed secret set takes)'),
      doc: "the name of a secret in the data dir's vault (homed secret set NAME)",
    },
    apiKeyEnv: { type: 'string', nonEmpty: true, doc: 'the environment variable holding the key' },
    contextWindow: { type: 'integer', min: 1, doc: 'tokens the model can read; prompts are kept within 80% of it' },
  },
};

export const SETTINGS_SCHEMA: SettingsField = {
  type: 'object',
  doc: 'settings.json',
  fields: {
    llm: {
      type: 'object',
      doc: 'the model',
      fields: {
        sources: { type: 'list', of: llmSource, uniqueBy: 'name', doc: 'model sources in fallback order' },
        model: { type: 'string', nonEmpty: true, doc: "overrides every source's model" },
        systemPrompt: { type: 'string', doc: "the persona (else the data dir's persona.md)" },
        maxRounds: { type: 'integer', min: 1, max: 1_000, doc: 'tool rounds per turn' },
      },
    },
    timeZone: { type: 'string', check: timeZoneProblem, doc: 'the IANA time zone of the timeline layer' },
    scheduler: {
      type: 'object',
      doc: 'the input scheduler',
      fields: {
        preemptCooldownMs: { type: 'integer', min: 0, doc: 'how long a preempting task runs before it can be preempted' },
        offloadAfterMs: {
          type: 'integer',
          min: 0,
          doc: 'busy time after which each queued input is told the agent is busy (it stays queued)',
        },
      },
    },
    projections: {
      type: 'object',
      doc: 'read models',
      fields: {
        inline: {
          type: 'list',
          of: { type: 'enum', values: allProjections().map((p) => p.name), doc: 'a projection name' },
          doc: 'projections updated in the append',
        },
      },
    },
    memory: {
      type: 'object',
      doc: 'the three-tier memory',
      fields: {
        protectRecent: { type: 'integer', min: 0, doc: 'the newest events never pruned' },
        keepTopK: { type: 'integer', min: 0, doc: 'the most relevant events kept in context' },
        budgetTokens: { type: 'integer', min: 1, doc: "tokens the first tier holds (default: from the model's window)" },
        lexicon: { type: 'enum', values: ['wordnet', 'none'], doc: 'related words for keyword recall' },
        heartbeats: {
          type: 'object',
          doc: 'the background loops',
          fields: {
            rulesMinutes: minutes('rules'),
            distillMinutes: minutes('distill'),
            archiveMinutes: minutes('archive'),
            mergeMinutes: minutes('merge'),
            reviewMinutes: minutes('review'),
          },
        },
        embedding: {
          type: 'object',
          doc: 'dense recall',
          fields: { onnxDir: { type: 'string', nonEmpty: true, doc: 'an ONNX model directory, relative to the data dir' } },
        },
      },
    },
    security: {
      type: 'object',
      doc: 'the security firewall',
      fields: {
        tools: toolRules('which tools a turn may offer and run, whoever sent its input; deny always wins'),
        principals: {
          type: 'map',
          doc: "rules for one principal (who an input is from: 'owner', 'internal', or a plugin profile such as 'qq.guest'), on top of security.tools",
          of: toolRules('the tools this principal may use'),
        },
        owners: {
          type: 'list',
          of: { type: 'string', nonEmpty: true, doc: "a plugin profile, e.g. 'qq.owner'" },
          doc: 'plugin profiles you vouch for as yourself: they may use hard-private tools (settings, secrets, plugins, memory admin)',
        },
        sandbox: {
          type: 'object',
          doc: 'where tools that touch the machine may read, write and connect (checked on the arguments each tool declares)',
          fields: {
            read: {
              type: 'list',
              of: { type: 'string', nonEmpty: true, doc: 'a directory (relative: to the data dir; ~: your home)' },
              doc: 'directories tools may read (default: the files plugin roots)',
            },
            write: {
              type: 'list',
              of: { type: 'string', nonEmpty: true, doc: 'a directory (relative: to the data dir; ~: your home)' },
              doc: 'directories tools may write (default: the files plugin roots)',
            },
            network: { type: 'boolean', doc: 'whether tools may connect anywhere at all (default false)' },
            hosts: {
              type: 'list',
              of: { type: 'string', nonEmpty: true, doc: "a host name, or '*.example.com'" },
              doc: 'when given, the only hosts tools may connect to',
            },
            loopback: { type: 'boolean', doc: 'whether tools may connect to this machine (localhost, 127.0.0.1, ::1); default false' },
            plugins: {
              type: 'enum',
              values: ['isolate', 'require', 'off'],
              doc: 'subprocess plugins run where the daemon\'s own files are hidden and, without the "network" capability, no address is reachable: isolate (default; when this machine cannot, they run as they are and the start says so), require (they do not start then), off',
            },
            pluginStateMb: {
              type: 'integer',
              min: 1,
              // 1 TiB: its bytes stay a whole number as prlimit reads it (1e15 MB was written 1.048576e+21, read as 1 byte).
              max: 1_048_576,
              doc: 'the most a subprocess plugin may keep in its state folder, in MB (default 1024), also the most any one file it writes may hold: a plugin over it is stopped, and not started again until its folder holds less',
            },
            diskReserveMb: {
              type: 'integer',
              min: 0,
              max: 1_048_576,
              doc: 'MB the disk of the data dir keeps free for the log (default 256): below it, subprocess plugins are stopped, and not started again until it has more',
            },
          },
        },
        review: {
          type: 'object',
          doc: 'content review of inputs and tool results: a finding is recorded (never the matched text) and the model is warned',
          fields: {
            enabled: { type: 'boolean', doc: 'review at all (default true)' },
            words: { type: 'list', of: { type: 'string', nonEmpty: true, doc: 'a word or phrase' }, doc: 'sensitive words to flag' },
            block: {
              type: 'list',
              of: { type: 'enum', values: FINDING_RULES, doc: 'a review rule' },
              doc: 'rules whose finding withholds the content from the model instead of warning it',
            },
          },
        },
      },
    },
    plugins: {
      type: 'map',
      doc: "each plugin's own settings, by plugin name",
      of: { type: 'json', doc: 'what the plugin reads; it checks them itself' },
      known: {
        memory: {
          type: 'object',
          doc: 'the built-in memory tools',
          fields: {
            adminTools: { type: 'boolean', doc: 'offer the model the tools that merge, purge, edit and delete graph entries' },
          },
        },
        webui: {
          type: 'object',
          doc: 'the built-in web UI',
          fields: {
            port: { type: 'integer', min: 0, max: 65_535, doc: 'the port it listens on (default 8080; 0 takes any free port)' },
            host: {
              type: 'string',
              check: listenHostProblem,
              doc: 'the address it listens on (default 127.0.0.1, this machine only; 0.0.0.0 lets other machines in)',
            },
          },
        },
        files: {
          type: 'object',
          doc: 'the built-in files plugin',
          fields: {
            roots: {
              type: 'list',
              nonEmpty: true,
              of: { type: 'string', nonEmpty: true, doc: 'a directory, absolute or relative to the data dir' },
              doc: 'the directories the files tools may use',
            },
          },
        },
      },
    },
  },
};
