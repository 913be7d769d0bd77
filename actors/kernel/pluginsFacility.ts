/**
 * What the plugins give the kernel (the plugin host provides it): what a turn may use, the
 * way output reaches a channel, and the controls and listings the cli offers.
 */
import type { Delivery } from '../output/outputDeliveries.ts';
import type { ToolRules } from '../../machines/security/index.ts';
import type { ApprovalAnswer } from '../../machines/turn/index.ts';
import type { TurnPlugins } from '../turn/turnEffects.ts';
import type { PendingApproval } from '../turn/turnRunner.ts';

export type PluginListing = Readonly<{
  name: string;
  kind: string;
  version: string;
  state: string;
  enabled: boolean;
  restarts: number;
  pid: number | null;
  tools: string[];
  stages: string[];
  channels: string[];
}>;

export type PluginsFacility = Readonly<{
  turns: TurnPlugins;
  /** Hands a delivery to the plugin that owns its channel. */
  deliver(delivery: Delivery): Promise<void>;
  list(): readonly PluginListing[];
  /** The tool rules of a plugin-declared principal (a profile in its plugin's manifest). */
  profileOf(principal: string): ToolRules | undefined;
  /** Every principal the loaded plugins' manifests declare (`qq.guest`, …). */
  profiles(): readonly string[];
  /** Where the cli's /approve and /deny go (the turns hand it over when they start). */
  useApprovals(desk: ApprovalDesk): void;
}>;

/** The calls waiting for a person, how to answer one, and how to stop the replies that wait for them (the turn runner). */
export type ApprovalDesk = Readonly<{
  pending(): readonly PendingApproval[];
  answer(answer: ApprovalAnswer): Promise<void>;
  /** Stops the replies waiting only for approvals whose input `which` picks; how many. */
  stopParked(which: (input: string) => boolean): Promise<number>;
  /** The task a reply to `input` runs under once an approval resumed it (what stopping it stops), if it runs. */
  resumedTaskOf(input: string): string | undefined;
}>;
