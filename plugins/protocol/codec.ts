/**
 * Frame bodies as plain msgpack that any language's library reads: no msgpackr records,
 * no extension types beyond the standard timestamp, `undefined` sent as nil.
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { packWith } from '../../events/codec.ts';

const packr = new Packr({ useRecords: false, moreTypes: false, encodeUndefinedAsNil: true, mapsAsObjects: true, variableMapSize: true });

export const encodeBody = (value: unknown): Buffer => packWith(packr, value);

/**
 * Encodes a value with `headerBytes` (at most 255) left free in front of the body, for the frame
 * header: one buffer, no copy. The bytes belong to the caller (msgpackr never writes them again).
 */
export const encodeBodyAfter = (headerBytes: number, value: unknown): Buffer => packWith(packr, value, RESERVE_START_SPACE | headerBytes);

/** Decodes exactly one msgpack value; throws when the bytes are truncated or carry trailing data. */
export const decodeBody = (body: Uint8Array): unknown => packr.unpack(body);
