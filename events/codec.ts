/**
 * Payload codec: msgpack via msgpackr, with options fixed so that bytes written by one
 * build decode the same in another. Pure.
 */
import { C1, Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true });

/** A packed value at least this large leaves msgpackr's shared buffer behind (see `packWith`). */
const LARGE_PACK_BYTES = 256 * 1024;
const SMALL_PACK_BUFFER_BYTES = 8192;

/**
 * `packer.pack(value, options)`, but a large value does not leave its size behind: msgpackr packs
 * into one buffer shared by every Packr, grows it to several times the largest value packed and
 * keeps it (up to 1 GB), allocating another as large each time it fills. After a large value the
 * packers get a small buffer again. The bytes returned stay valid (nothing writes over them).
 */
export const packWith = (packer: Packr, value: unknown, options?: number): Buffer => {
  const bytes = packer.pack(value, options);
  if (bytes.length >= LARGE_PACK_BYTES) packer.useBuffer(Buffer.allocUnsafeSlow(SMALL_PACK_BUFFER_BYTES));
  return bytes;
};

export const encodePayload = (data: unknown): Buffer => packWith(packr, data);

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
