/**
 * What plugins offer a turn (tools, stage handlers, output channels), recorded once per
 * distinct set in the `toolsets` stream under a content-derived id. A turn names the id instead
 * of carrying the set, so the log holds each set once however many turns use it.
 */
import { createHash } from 'node:crypto';
import { TOOLSET_STREAM, type EventStore } from '../../events/index.ts';
import type { Toolset } from '../../machines/turn/index.ts';

export const toolsetId = (toolset: Toolset): string =>
  createHash('sha256')
    // Refusals, approvals and secrets join the hash only when there are some, so the ids of sets
    // recorded before them stay; each one present brings those before it, so no two sets hash alike.
    .update(
      JSON.stringify([
        toolset.tools,
        toolset.handlers,
        toolset.channels,
        ...(toolset.refused?.length || toolset.approve?.length || toolset.secrets || toolset.sandbox ? [toolset.refused ?? []] : []),
        ...(toolset.approve?.length || toolset.secrets || toolset.sandbox ? [toolset.approve ?? []] : []),
        ...(toolset.secrets || toolset.sandbox ? [toolset.secrets ?? null, toolset.secretsRefused ?? null] : []),
        ...(toolset.sandbox ? [toolset.sandbox] : []),
        // Last, and only when set, so the ids of sets without it stay as they were.
        ...(toolset.approvalsRefused !== undefined ? [{ approvalsRefused: toolset.approvalsRefused }] : []),
        ...(toolset.approvalsAtMost !== undefined ? [{ approvalsAtMost: toolset.approvalsAtMost }] : []),
      ]),
    )
    .digest('hex')
    .slice(0, 16);

export class ToolsetLedger {
  private readonly known = new Map<string, Toolset>();
  private loaded: Promise<void> | undefined;

  constructor(private readonly store: EventStore) {}

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      for (const { data } of await this.store.readAll({ types: ['ToolsetRecorded'] })) {
        this.known.set(data.toolset, {
          tools: data.tools,
          handlers: data.handlers,
          channels: data.channels,
          ...(data.refused?.length ? { refused: data.refused } : {}),
          ...(data.approve?.length ? { approve: data.approve } : {}),
          ...(data.secrets ? { secrets: data.secrets } : {}),
          ...(data.secretsRefused !== undefined ? { secretsRefused: data.secretsRefused } : {}),
          ...(data.sandbox ? { sandbox: data.sandbox } : {}),
          ...(data.approvalsRefused !== undefined ? { approvalsRefused: data.approvalsRefused } : {}),
          ...(data.approvalsAtMost !== undefined ? { approvalsAtMost: data.approvalsAtMost } : {}),
        });
      }
    })();
    return this.loaded;
  }

  /** The id of `toolset`, recorded first if the log does not hold it yet. */
  async record(toolset: Toolset): Promise<string> {
    await this.load();
    const id = toolsetId(toolset);
    if (this.known.has(id)) return id;
    // The id is the event's id too: two recordings of one set at once are one event.
    await this.store.append(TOOLSET_STREAM, [
      {
        id: `toolset-${id}`,
        type: 'ToolsetRecorded',
        data: {
          toolset: id,
          tools: [...toolset.tools],
          handlers: toolset.handlers,
          channels: [...toolset.channels],
          ...(toolset.refused?.length ? { refused: [...toolset.refused] } : {}),
          ...(toolset.approve?.length ? { approve: [...toolset.approve] } : {}),
          ...(toolset.secrets ? { secrets: toolset.secrets.map((g) => ({ name: g.name, tools: [...g.tools] })) } : {}),
          ...(toolset.secretsRefused !== undefined ? { secretsRefused: toolset.secretsRefused } : {}),
          ...(toolset.sandbox ? { sandbox: toolset.sandbox } : {}),
          ...(toolset.approvalsRefused !== undefined ? { approvalsRefused: toolset.approvalsRefused } : {}),
          ...(toolset.approvalsAtMost !== undefined ? { approvalsAtMost: toolset.approvalsAtMost } : {}),
        },
      },
    ]);
    this.known.set(id, toolset);
    return id;
  }

  /** A recorded toolset by id. */
  async get(id: string): Promise<Toolset | undefined> {
    await this.load();
    return this.known.get(id);
  }
}
