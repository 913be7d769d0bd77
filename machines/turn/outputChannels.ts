/**
 * Output channels as tools (spec: "Output Channel System"): every registered channel brings
 * `output_send__{name}` (payload, meta, type) and `output_send__{name}_help` (its meta format
 * and types). What a channel can carry is a set of capability flags. Pure.
 */
import type { OutputChannel, RegisteredTool } from '../../events/index.ts';

/**
 * The flags a channel declares: the payload types it carries, `realtime` (a live stream, such as
 * voice, where a late chunk is worth less than a dropped one) and `progress` (it shows a line
 * when a tool starts for a reply it carries).
 */
export const Capability = { text: 1, file: 2, image: 4, audio: 8, structured: 16, realtime: 32, progress: 64 } as const;
export type CapabilityName = keyof typeof Capability;

const PAYLOAD_TYPES: readonly CapabilityName[] = ['text', 'file', 'image', 'audio', 'structured'];

/** Whether a channel declared itself real-time: only there may output drop chunks to keep up. */
export const isRealtime = (channel: OutputChannel | undefined): boolean => ((channel?.capabilities ?? 0) & Capability.realtime) !== 0;

/** Whether a channel asked to be told when a tool starts for a reply it carries. */
export const showsProgress = (channel: OutputChannel | undefined): boolean => ((channel?.capabilities ?? 0) & Capability.progress) !== 0;

/** `owner` delivers the channel; `capabilities` is a bitwise OR of `Capability` flags; `metaDoc` says how `meta` routes. */
export type { OutputChannel };

export const OUTPUT_SEND_PREFIX = 'output_send__';

/** The payload types a channel accepts, from its flags, in flag order. */
export const channelTypes = (channel: OutputChannel): CapabilityName[] =>
  PAYLOAD_TYPES.filter((name) => (channel.capabilities & Capability[name]) !== 0);

export const channelHelp = (channel: OutputChannel): string =>
  [
    `Channel '${channel.name}' accepts type ${
      channelTypes(channel)
        .map((t) => `'${t}'`)
        .join(', ') || '(nothing)'
    }.`,
    `meta: ${channel.metaDoc || 'no routing metadata; send {}'}`,
  ].join('\n');

/** The two tools of each channel, owned by the channel's plugin. */
export const channelTools = (channels: readonly OutputChannel[]): RegisteredTool[] =>
  channels.flatMap((channel): RegisteredTool[] => {
    if (channel.name.endsWith('_help')) {
      throw new RangeError(`output channel '${channel.name}' cannot end in '_help': its help tool would share the name`);
    }
    return [
      {
        name: `${OUTPUT_SEND_PREFIX}${channel.name}`,
        owner: channel.owner,
        origin: 'plugin',
        description: `Send a message on the '${channel.name}' channel. Call ${OUTPUT_SEND_PREFIX}${channel.name}_help first for its meta format.`,
        parameters: {
          type: 'object',
          properties: {
            payload: { type: 'string', description: 'the content: text, or a file/image/audio reference' },
            meta: { type: 'object', description: 'routing metadata for this channel' },
            type: { type: 'string', enum: channelTypes(channel) },
          },
          required: ['payload', 'type'],
        },
      },
      {
        name: `${OUTPUT_SEND_PREFIX}${channel.name}_help`,
        owner: channel.owner,
        origin: 'plugin',
        description: `What the '${channel.name}' channel accepts: its meta format and payload types.`,
        parameters: { type: 'object', properties: {} },
      },
    ];
  });

export type ChannelToolCall = Readonly<{ kind: 'send'; channel: string }> | Readonly<{ kind: 'help'; channel: string }>;

/** Which channel (and which of its two tools) a tool name names, if any. */
export const parseChannelTool = (toolName: string): ChannelToolCall | undefined => {
  if (!toolName.startsWith(OUTPUT_SEND_PREFIX)) return undefined;
  const rest = toolName.slice(OUTPUT_SEND_PREFIX.length);
  return rest.endsWith('_help') ? { kind: 'help', channel: rest.slice(0, -'_help'.length) } : { kind: 'send', channel: rest };
};
