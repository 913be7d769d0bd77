/** Validation of the memory tools' arguments. Pure: each function returns the value or throws `InvalidMemoryArgument`. */
import type { BlockRef } from '../../../actors/index.ts';
import { InvalidMemoryArgument } from './errors.ts';

export type Args = Readonly<Record<string, unknown>>;

export type TripleInput = Readonly<{ subject: string; predicate: string; object: string; confidence: number }>;

export const MAX_K = 50;
export const MAX_TRIPLES = 100;
/** The confidence of a triple the model commits without saying. */
export const DEFAULT_CONFIDENCE = 1;
const DIGEST = /^[0-9a-f]{12,}$/i;

/** The most of a model's argument a reply quotes back: a huge one is not echoed into the context whole. */
export const QUOTED_AT_MOST = 120;

/** `text` as a reply quotes it: at most QUOTED_AT_MOST characters, and how long it was when cut. */
export const quoted = (text: string): string =>
  text.length > QUOTED_AT_MOST ? `${text.slice(0, QUOTED_AT_MOST)}… (${text.length} characters)` : text;

const shown = (value: unknown): string => (value === undefined ? 'nothing' : quoted(JSON.stringify(value) ?? String(value)));

/** A non-empty string (trimmed). */
export const textArg = (tool: string, args: Args, field: string): string => {
  const value = args[field];
  if (typeof value !== 'string' || value.trim() === '')
    throw new InvalidMemoryArgument(tool, field, `'${field}' must be a non-empty string; got ${shown(value)}`);
  return value.trim();
};

export const optionalTextArg = (tool: string, args: Args, field: string): string | undefined =>
  args[field] === undefined || args[field] === null ? undefined : textArg(tool, args, field);

export const countArg = (tool: string, args: Args, field: string, fallback: number): number => {
  const value = args[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_K) {
    throw new InvalidMemoryArgument(tool, field, `'${field}' must be an integer from 1 to ${MAX_K}; got ${shown(value)}`);
  }
  return value;
};

export const confidenceArg = (tool: string, value: unknown, field: string): number | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new InvalidMemoryArgument(tool, field, `'${field}' must be a number from 0 to 1; got ${shown(value)}`);
  }
  return value;
};

export const stringListArg = (tool: string, args: Args, field: string): string[] | undefined => {
  const value = args[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new InvalidMemoryArgument(tool, field, `'${field}' must be an array of non-empty strings; got ${shown(value)}`);
  }
  return [...new Set(value.map((v: string) => v.trim()))];
};

export const triplesArg = (tool: string, args: Args): TripleInput[] => {
  const value = args.triples;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_TRIPLES) {
    throw new InvalidMemoryArgument(
      tool,
      'triples',
      `'triples' must be an array of 1 to ${MAX_TRIPLES} {subject, predicate, object, confidence?} objects; got ${shown(value)}`,
    );
  }
  return value.map((item: unknown, i) => {
    const field = `triples[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new InvalidMemoryArgument(
        tool,
        'triples',
        `'${field}' must be an object {subject, predicate, object, confidence?}; got ${shown(item)}`,
      );
    }
    const triple = item as Args;
    const part = (name: string) => {
      const v = triple[name];
      if (typeof v !== 'string' || v.trim() === '')
        throw new InvalidMemoryArgument(tool, 'triples', `'${field}.${name}' must be a non-empty string; got ${shown(v)}`);
      return v.trim();
    };
    return {
      subject: part('subject'),
      predicate: part('predicate'),
      object: part('object'),
      confidence: confidenceArg(tool, triple.confidence, `${field}.confidence`) ?? DEFAULT_CONFIDENCE,
    };
  });
};

/** `media_digests` as media blocks, one per distinct block id (`blk_media_` + the digest's first 12 hex digits). */
export const mediaBlocksArg = (tool: string, args: Args): BlockRef[] => {
  const digests = stringListArg(tool, args, 'media_digests') ?? [];
  const blocks = new Map<string, BlockRef>();
  for (const digest of digests) {
    if (!DIGEST.test(digest)) {
      throw new InvalidMemoryArgument(
        tool,
        'media_digests',
        `'media_digests' entries must be hex content digests of at least 12 characters; got ${shown(digest)}`,
      );
    }
    const blockId = `blk_media_${digest.slice(0, 12).toLowerCase()}`;
    blocks.set(blockId, { blockId, kind: 'media' });
  }
  return [...blocks.values()];
};
