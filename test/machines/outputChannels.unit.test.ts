import { describe, expect, it } from 'vitest';
import { Capability, channelHelp, channelTools, channelTypes, parseChannelTool, type OutputChannel } from '../../machines/turn/index.ts';

const qq: OutputChannel = {
  name: 'qq',
  owner: 'qq-plugin',
  capabilities: Capability.text | Capability.image,
  metaDoc: '{"group": "<group id>"}',
};

describe('output channels as tools', () => {
  it('each channel brings output_send__{name} and output_send__{name}_help, owned by its plugin', () => {
    const tools = channelTools([qq]);
    expect(tools.map((t) => [t.name, t.owner])).toEqual([
      ['output_send__qq', 'qq-plugin'],
      ['output_send__qq_help', 'qq-plugin'],
    ]);
    expect((tools[0]!.parameters as { properties: { type: { enum: string[] } } }).properties.type.enum).toEqual(['text', 'image']);
    // Names every provider accepts, so a plugin host can register them as they are.
    expect(tools.every((t) => /^[a-zA-Z0-9_-]{1,64}$/.test(t.name))).toBe(true);
  });

  it('derives the payload types from the capability flags', () => {
    expect(channelTypes({ ...qq, capabilities: Capability.audio | Capability.structured | Capability.text })).toEqual([
      'text',
      'audio',
      'structured',
    ]);
    expect(channelHelp(qq)).toBe("Channel 'qq' accepts type 'text', 'image'.\nmeta: {\"group\": \"<group id>\"}");
  });

  it('maps a tool name back to its channel, and refuses names that would clash', () => {
    expect(parseChannelTool('output_send__qq')).toEqual({ kind: 'send', channel: 'qq' });
    expect(parseChannelTool('output_send__qq_help')).toEqual({ kind: 'help', channel: 'qq' });
    expect(parseChannelTool('files_read')).toBeUndefined();
    expect(() => channelTools([{ ...qq, name: 'x_help' }])).toThrow(/cannot end in '_help'/);
  });
});
