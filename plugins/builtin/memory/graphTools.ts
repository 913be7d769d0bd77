/**
 * The graph-writing tools: memory_commit, memory_merge, memory_purge, memory_edit and
 * memory_delete_entity. Each validates, looks the names up in the read models, decides the
 * event (listing the relations it removes) and appends it with `memory.record`; none edits a table.
 */
import type { NewHologramEvent } from '../../../events/index.ts';
import { entities, entityKey, type TripleData } from '../../../actors/index.ts';
import { InvalidMemoryArgument, MediaWithoutSentence, UnknownEntity, UnknownRelation } from './errors.ts';
import {
  confidenceArg,
  mediaBlocksArg,
  optionalTextArg,
  stringListArg,
  textArg,
  triplesArg,
  type Args,
  MAX_TRIPLES,
} from './memoryArgs.ts';
import { closeNames, findEntity, findRelation, relationsTouching, type EntityRow } from './memoryQueries.ts';
import type { MemoryTool, MemoryToolContext } from './memoryTool.ts';

const listed = (ids: readonly string[]) => (ids.length > 0 ? ids.join(', ') : 'none');

export const graphTools = (ctx: MemoryToolContext): MemoryTool[] => {
  const { memory, clock, ids } = ctx;
  const tx = memory.readModels;

  const entityArg = (tool: string, args: Args, field: string): EntityRow => {
    const name = textArg(tool, args, field);
    const found = findEntity(tx, name);
    if (!found) throw new UnknownEntity(tool, name, closeNames(tx, name));
    return found;
  };

  const record = async (event: (at: number) => NewHologramEvent): Promise<void> => {
    const at = clock.now();
    await memory.record([event(at)], at);
  };

  const commit: MemoryTool = {
    spec: {
      name: 'memory_commit',
      description:
        'Store facts in long-term memory as (subject, predicate, object) triples. sentence_text is the sentence they come from; media_digests attach media (by content digest) to that sentence.',
      parameters: {
        type: 'object',
        properties: {
          triples: {
            type: 'array',
            minItems: 1,
            maxItems: MAX_TRIPLES,
            items: {
              type: 'object',
              properties: {
                subject: { type: 'string' },
                predicate: { type: 'string', description: 'e.g. lives_in, likes, works_at' },
                object: { type: 'string' },
                confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Default 1.' },
              },
              required: ['subject', 'predicate', 'object'],
            },
          },
          sentence_text: { type: 'string', description: 'The sentence the triples state, kept with them.' },
          media_digests: {
            type: 'array',
            items: { type: 'string' },
            description: 'Hex content digests (≥ 12 characters) of media the sentence refers to; needs sentence_text.',
          },
        },
        required: ['triples'],
      },
    },
    async run(args) {
      const tool = 'memory_commit';
      const triples = triplesArg(tool, args);
      const sentence = optionalTextArg(tool, args, 'sentence_text');
      const blocks = mediaBlocksArg(tool, args);
      if (blocks.length > 0 && sentence === undefined) throw new MediaWithoutSentence(tool);
      // A block has one holder: the media hang off the sentence through its first triple.
      const data: TripleData[] = triples.map((t, i) => ({
        relationId: ids.next(),
        ...t,
        ...(sentence !== undefined ? { sentence } : {}),
        ...(i === 0 && blocks.length > 0 ? { blocks } : {}),
      }));
      await record((at) => ({ type: 'MemoryCommitted', data: { triples: data, by: 'tool', at } }));
      const lines = data.map((t) => `${t.relationId}: ${t.subject} ${t.predicate} ${t.object} (confidence ${t.confidence})`);
      const media = blocks.length > 0 ? `\nMedia attached to the sentence: ${blocks.map((b) => b.blockId).join(', ')}` : '';
      return `Committed ${data.length} relation(s):\n${lines.join('\n')}${media}`;
    },
  };

  const merge: MemoryTool = {
    spec: {
      name: 'memory_merge',
      description: "Merge two entities that name the same thing: every relation of 'from' moves to 'into', and 'from' is gone.",
      parameters: {
        type: 'object',
        properties: {
          into: { type: 'string', description: 'Entity that stays.' },
          from: { type: 'string', description: 'Entity merged into it.' },
        },
        required: ['into', 'from'],
      },
    },
    async run(args) {
      const tool = 'memory_merge';
      const into = entityArg(tool, args, 'into');
      const from = entityArg(tool, args, 'from');
      if (into.entity === from.entity)
        throw new InvalidMemoryArgument(tool, 'from', `'into' and 'from' are the same entity '${into.name}'`);
      await record((at) => ({ type: 'EntitiesMerged', data: { into: into.name, from: from.name, by: 'tool', at } }));
      return `Merged '${from.name}' into '${into.name}': it now has ${relationsTouching(tx, into.entity).length} relation(s).`;
    },
  };

  const purge: MemoryTool = {
    spec: {
      name: 'memory_purge',
      description:
        'Remove relations from memory: the ones listed, and/or every relation of an entity. Entities left without relations are removed too.',
      parameters: {
        type: 'object',
        properties: {
          relation_ids: { type: 'array', items: { type: 'string' }, description: 'Relations to remove.' },
          entity: { type: 'string', description: 'Remove all relations of this entity.' },
        },
      },
    },
    async run(args) {
      const tool = 'memory_purge';
      const given = stringListArg(tool, args, 'relation_ids') ?? [];
      const entity = args.entity === undefined || args.entity === null ? undefined : entityArg(tool, args, 'entity');
      if (given.length === 0 && !entity)
        throw new InvalidMemoryArgument(tool, 'relation_ids', "give 'relation_ids' (a non-empty list) or 'entity'");
      const unknown = given.filter((id) => !findRelation(tx, id));
      if (unknown.length > 0) throw new UnknownRelation(tool, unknown);
      const relationIds = [...new Set([...given, ...(entity ? relationsTouching(tx, entity.entity) : [])])];
      const before = entities(tx);
      await record((at) => ({ type: 'MemoryPurged', data: { relationIds, at } }));
      const left = new Set(entities(tx).map((e) => e.entity));
      const gone = before.filter((e) => !left.has(e.entity)).map((e) => e.name);
      return `Purged ${relationIds.length} relation(s): ${listed(relationIds)}. Entities removed with them: ${gone.length > 0 ? gone.join(', ') : 'none'}.`;
    },
  };

  const edit: MemoryTool = {
    spec: {
      name: 'memory_edit',
      description: 'Edit an entity (rename_to, kind) or a relation (predicate, object, confidence). Give either entity or relation_id.',
      parameters: {
        type: 'object',
        properties: {
          entity: { type: 'string', description: 'Entity to edit.' },
          rename_to: { type: 'string', description: 'New name (to join two entities, use memory_merge).' },
          kind: { type: 'string', description: 'e.g. person, place, project.' },
          relation_id: { type: 'string', description: 'Relation to edit.' },
          predicate: { type: 'string' },
          object: { type: 'string' },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
        },
      },
    },
    async run(args) {
      const tool = 'memory_edit';
      const has = (field: string) => args[field] !== undefined && args[field] !== null;
      const entityFields = ['rename_to', 'kind'].filter(has);
      const relationFields = ['predicate', 'object', 'confidence'].filter(has);
      if (has('entity') === has('relation_id'))
        throw new InvalidMemoryArgument(tool, 'entity', "give exactly one of 'entity' or 'relation_id'");
      if (has('entity')) {
        if (relationFields.length > 0)
          throw new InvalidMemoryArgument(
            tool,
            relationFields[0]!,
            `'${relationFields.join("', '")}' edit a relation: give 'relation_id', not 'entity'`,
          );
        if (entityFields.length === 0) throw new InvalidMemoryArgument(tool, 'rename_to', "an entity edit needs 'rename_to' or 'kind'");
        const entity = entityArg(tool, args, 'entity');
        const renameTo = optionalTextArg(tool, args, 'rename_to');
        const kind = optionalTextArg(tool, args, 'kind');
        const clash = renameTo === undefined ? undefined : findEntity(tx, renameTo);
        if (clash && clash.entity !== entity.entity) {
          throw new InvalidMemoryArgument(
            tool,
            'rename_to',
            `an entity '${clash.name}' already exists; to join the two use memory_merge {into: '${clash.name}', from: '${entity.name}'}`,
          );
        }
        await record((at) => ({
          type: 'EntityEdited',
          data: { entity: entity.name, ...(renameTo ? { renameTo } : {}), ...(kind ? { kind } : {}), at },
        }));
        return `Edited entity '${entity.name}'${renameTo ? `: renamed to '${renameTo}'` : ''}${kind ? `${renameTo ? ',' : ':'} kind ${kind}` : ''}.`;
      }
      if (entityFields.length > 0)
        throw new InvalidMemoryArgument(
          tool,
          entityFields[0]!,
          `'${entityFields.join("', '")}' edit an entity: give 'entity', not 'relation_id'`,
        );
      if (relationFields.length === 0)
        throw new InvalidMemoryArgument(tool, 'predicate', "a relation edit needs 'predicate', 'object' or 'confidence'");
      const relationId = textArg(tool, args, 'relation_id');
      if (!findRelation(tx, relationId)) throw new UnknownRelation(tool, [relationId]);
      const predicate = optionalTextArg(tool, args, 'predicate');
      const object = optionalTextArg(tool, args, 'object');
      const confidence = confidenceArg(tool, args.confidence, 'confidence');
      await record((at) => ({
        type: 'RelationEdited',
        data: {
          relationId,
          ...(predicate ? { predicate } : {}),
          ...(object ? { object } : {}),
          ...(confidence !== undefined ? { confidence } : {}),
          at,
        },
      }));
      const now = findRelation(tx, relationId)!;
      return `Edited relation ${relationId}: ${now.subject} ${now.predicate} ${now.object} (confidence ${now.confidence}).`;
    },
  };

  const deleteEntity: MemoryTool = {
    spec: {
      name: 'memory_delete_entity',
      description: 'Delete an entity and every relation that touches it.',
      parameters: { type: 'object', properties: { entity: { type: 'string' } }, required: ['entity'] },
    },
    async run(args) {
      const entity = entityArg('memory_delete_entity', args, 'entity');
      const relationIds = relationsTouching(tx, entityKey(entity.entity));
      await record((at) => ({ type: 'EntityDeleted', data: { entity: entity.name, relationIds, at } }));
      return `Deleted '${entity.name}' and its ${relationIds.length} relation(s): ${listed(relationIds)}.`;
    },
  };

  return [commit, merge, purge, edit, deleteEntity];
};
