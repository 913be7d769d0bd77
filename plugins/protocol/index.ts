/** The plugin wire protocol: msgpack frames over a byte stream pair (see plugins/PROTOCOL.md). */
export * from './errors.ts';
export * from './framing.ts';
export * from './messages.ts';
export { decodeBody, encodeBody } from './codec.ts';
export * from './connection.ts';
