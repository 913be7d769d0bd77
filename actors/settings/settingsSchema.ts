/**
 * Every setting of settings.json, its shape and what it does: the one schema the daemon,
 * `homed chat` and `homed replay` check settings against (defaults live with the code that
 * reads each setting). A module that reads a new setting adds it here.
 */
import { BUILTIN_ADAPTERS } from '../../adapters/llm/luaAdapter.ts';
import { SECRET_NAME } from '../../adapters/secrets/secretVault.ts';
import { baseUrlProblem } from './baseUrl.ts';
import type { SettingsField } from './settingsField.ts';

const timeZoneProblem = (zone: string): string | null =>
  zone === 'UTC' || Intl.supportedValuesOf('timeZone').includes(zone)
    ? null
    : `'${zone}' is not an IANA time zone; use a name like "Europe/Paris" or "UTC"`;

const minutes = (loop: string): SettingsField => ({ type: 'number', exclusiveMin: 0, doc: `minutes between two runs of the ${loop} loop` });

const llmSource: SettingsField = {
  type: 'object',
  doc: 'one model source; the sources are asked in order',
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
        sources: { type: 'list', of: llmSource, doc: 'model sources in fallback order' },
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
          of: { type: 'string', nonEmpty: true, doc: 'a projection name' },
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
        tools: {
          type: 'object',
          doc: 'which tools a turn may offer and run; deny always wins',
          fields: {
            allow: {
              type: 'list',
              of: { type: 'string', nonEmpty: true, doc: "a tool name or glob ('files_*')" },
              doc: 'when given, only these tools',
            },
            deny: {
              type: 'list',
              of: { type: 'string', nonEmpty: true, doc: "a tool name or glob ('memory_*')" },
              doc: 'never these tools',
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
