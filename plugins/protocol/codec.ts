/**
 * Frame bodies as plain msgpack that any language's library reads: no msgpackr records,
 * no extension types beyond the standard timestamp, `undefined` sent as nil.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false, encodeUndefinedAsNil: true, mapsAsObjects: true, variableMapSize: true });

export const encodeBody = (value: unknown): Buffer => packr.pack(value);

/** Decodes exactly one msgpack value; throws when the bytes are truncated or carry trailing data. */
export const decodeBody = (body: Uint8Array): unknown => packr.unpack(body);
