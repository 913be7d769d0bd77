/** Typed refusals of the memory tools; each reaches the model as a tool result with isError. */
import { HologramError } from '../../../events/index.ts';
import { InvalidToolArgument } from '../shared/invalidToolArgument.ts';

/** A tool argument of the wrong type or shape, or a combination the tool cannot use. */
export class InvalidMemoryArgument extends InvalidToolArgument {
  readonly code = 'INVALID_MEMORY_ARGUMENT';
}

/** media_digests given with no sentence_text: media references hang off a sentence. */
export class MediaWithoutSentence extends HologramError {
  readonly code = 'MEDIA_WITHOUT_SENTENCE';
  constructor(readonly tool: string) {
    super(
      `${tool}: 'media_digests' were given without 'sentence_text'; media references hang off a sentence, so with no sentence ` +
        `there is nowhere to attach them. Call ${tool} again with a 'sentence_text' saying what the media shows`,
    );
  }
}

/** A name that is no entity of the graph. */
export class UnknownEntity extends HologramError {
  readonly code = 'UNKNOWN_ENTITY';
  constructor(
    readonly tool: string,
    readonly entity: string,
    readonly closeNames: readonly string[],
  ) {
    const close = closeNames.length > 0 ? `close names: ${closeNames.map((n) => `'${n}'`).join(', ')}` : 'no stored name is close to it';
    super(`${tool}: no entity '${entity}' in memory (${close}); use one of the stored names (memory_recall shows them)`);
  }
}

/** Relation ids that are not in the graph. */
export class UnknownRelation extends HologramError {
  readonly code = 'UNKNOWN_RELATION';
  constructor(
    readonly tool: string,
    readonly relationIds: readonly string[],
  ) {
    super(
      `${tool}: no relation ${relationIds.map((id) => `'${id}'`).join(', ')} in memory (already purged, or never committed); ` +
        `use the ids memory_commit returned or the ones memory_recall shows`,
    );
  }
}
