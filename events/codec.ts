/**
 * Payload codec: msgpack via msgpackr, with options fixed so that bytes written by one
 * build decode the same in another. Pure.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true });

export const encodePayload = (data: unknown): Buffer => packr.pack(data);

export const decodePayload = (bytes: Uint8Array): unknown => packr.unpack(bytes);
