/**
 * The page's view of what the daemon sends it (plugins/builtin/webui/app/api.ts), held to the
 * daemon's own types at compile time: the page runs in a browser and cannot import the daemon's
 * modules, so it declares the shapes it reads, and `npm run typecheck` fails here when a shape
 * the daemon sends no longer has what the page reads (a field renamed, dropped or of another type).
 * Extra fields on the daemon's side are fine: the page ignores them.
 */
import type { MachineLayout, ProbeResult, StateAt, WatchedActor, WatchedEvent } from '../../actors/index.ts';
import type * as Page from '../../plugins/builtin/webui/app/api.ts';
import type { ConversationSummary } from '../../plugins/builtin/webui/webuiApi.ts';
import type { SettingsReference } from '../../plugins/host/settingsDesk.ts';
import type { VerifyResult } from '../../plugins/host/timeTravelDesk.ts';
import type { PendingApprovalSummary, PluginSummary } from '../../plugins/sdk/builtinPlugin.ts';
import type { ChannelDelivery } from '../../plugins/sdk/pluginApi.ts';

/** Compiles only when what the daemon sends (`Sent`) has everything the page reads (`Read`). */
type Sends<Read, Sent extends Read> = [Read, Sent];

export type WireShapesChecked = [
  Sends<Page.WatchedActor, WatchedActor>,
  Sends<Page.WatchedEvent, WatchedEvent>,
  Sends<Page.MachineLayout, MachineLayout>,
  Sends<Page.StateAt, StateAt>,
  Sends<Page.VerifyResult, VerifyResult>,
  Sends<Page.PluginSummary, PluginSummary>,
  Sends<Page.Approval, PendingApprovalSummary>,
  Sends<Page.SettingsReference, SettingsReference>,
  Sends<Page.Probe, ProbeResult>,
  Sends<Page.ConversationSummary, ConversationSummary>,
  Sends<Page.Delivery, ChannelDelivery>,
];
