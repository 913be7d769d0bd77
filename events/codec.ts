/**
 * Payload codec: msgpack via msgpackr, with options fixed so that bytes written by one
 * build decode the same in another. Pure.
 */
import { C1, Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true });

export const encodePayload = (data: unknown): Buffer => packr.pack(data);

/** msgpackr decodes 0xc1, a byte msgpack never uses, to a marker object instead of failing. */
const holdsNeverUsedByte = (value: unknown): boolean =>
  value === C1 ||
  (typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && Object.values(value).some(holdsNeverUsedByte));

/** Throws on bytes that are not one well-formed msgpack value (damage is never decoded). */
export const decodePayload = (bytes: Uint8Array): unknown => {
  const value = packr.unpack(bytes);
  // The walk runs only when the byte occurs at all, so an intact payload costs one memchr.
  if (bytes.includes(0xc1) && holdsNeverUsedByte(value)) {
    throw new Error('the payload holds the byte 0xc1, which msgpack never uses');
  }
  return value;
};
