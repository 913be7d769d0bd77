/**
 * What the plugins give the kernel (the plugin host provides it): what a turn may use, the
 * way output reaches a channel, and the controls and listings the cli offers.
 */
import type { Delivery } from '../output/outputDeliveries.ts';
import type { TurnPlugins } from '../turn/turnEffects.ts';

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
}>;
