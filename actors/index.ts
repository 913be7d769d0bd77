/**
 * The actors' public surface: the one module plugins import from the running system (the
 * plugin host, the SDK's built-ins and the built-in plugins). What a plugin may touch of the
 * kernel is listed here; everything else under actors/ is internal.
 */
export {
  Facility,
  INSPECT_FACILITY,
  MACHINE_WATCH_FACILITY,
  type FacilityName,
  type FacilityTypes,
  type Inspector,
} from './kernel/facilities.ts';
export type { KernelModule, ModuleContext } from './kernel/kernelModule.ts';
export type { ApprovalDesk, PluginListing, PluginsFacility } from './kernel/pluginsFacility.ts';
export { setting, type Settings } from './modules/config.ts';
export { sourceLabels } from './llm/llmSources.ts';
export type { SchedulerFacility } from './modules/schedulerModule.ts';
export { inertClock, JournaledActor, type Fact, type TimedMessage } from './journal/journaledActor.ts';
export { replayJournal, type ReplayDivergence } from './journal/replayJournal.ts';
export type { ActorAt, Replayer, ReplayReport } from './replay/replayer.ts';
export type { TurnPlugins } from './turn/turnEffects.ts';
export type { Delivery } from './output/outputDeliveries.ts';
export type { Memory } from './memory/openMemory.ts';
export type { Fact as MemoryFact } from './journal/journal.ts';

// The core's vocabulary plugins speak: stages, tools, channels, the supervisor, the registry fold.
export {
  STAGES,
  TOOL_STAGES,
  type StageChange,
  type StageContext,
  type StageName,
  type HandlerInput,
  type HandlerResolution,
} from '../machines/stagePipeline/index.ts';
export { INTERNAL, isOwnerOrInternal, isUnder, keptToolsGrant, OWNER } from '../machines/security/index.ts';
export { PERSON_LEVEL } from '../machines/scheduler/index.ts';
export {
  Capability,
  DEFAULT_STAGE_TIMEOUT_MS,
  OUTPUT_SEND_PREFIX,
  type CapabilityName,
  type StageHandlers,
} from '../machines/turn/index.ts';
export {
  DEFAULT_MISBEHAVIOUR_CONFIG,
  noteMisbehaviour,
  summariseMisbehaviour,
  type MisbehaviourConfig,
  type MisbehaviourWindow,
  pluginSupervisorMachine,
  RESTART_DUE_EVENT,
  STABLE_UPTIME_EVENT,
  type PluginSupervisorConfig,
  type PluginSupervisorMessage,
} from '../machines/pluginSupervisor/index.ts';
export {
  crashReason,
  emptyPluginRegistry,
  foldPluginRegistry,
  holdingsOf,
  isFreshStart,
  registrationsOf,
  type PluginRegistry,
  type RefusedFolder,
} from '../projections/plugins/pluginRegistry.ts';
export {
  emptyProcessGroups,
  foldProcessGroups,
  type OpenGroup,
  type ProcessGroups,
} from '../projections/plugins/processGroups.ts';
// The memory read models' queries, for the memory tools and the web UI's memory view.
export {
  allRelations,
  coldDocs,
  contextOf,
  contextScopes,
  sceneMembers,
  scenes,
  blockCounts,
  blocksHeldBy,
  closeEntityNames,
  coldCounts,
  coldDocById,
  contextCounts,
  entities,
  entityKey,
  entityNamed,
  graphCounts,
  graphNeighbourhood,
  recalledInTurn,
  relationById,
  relationsTouching,
  type BlockRef,
  type ReadModelTx,
  type RelationRow,
  type TripleData,
} from '../projections/index.ts';
// Lua script plugins run in the same sandboxed VM as the LLM adapters.
export {
  DEFAULT_INSTRUCTION_BUDGET,
  DEFAULT_MEMORY_LIMIT_BYTES,
  DEFAULT_TIME_LIMIT_MS,
  LuaVm,
  type LuaLogLevel,
} from '../adapters/llm/luaVm.ts';
export { isLuaAdapterError, type LuaAdapterError } from '../adapters/llm/luaAdapterError.ts';

/** The data dir's own files, by name (what a plugin's sandbox hides). */
export { EVENT_LOG_FILE, SETTINGS_FILE, VECTOR_CACHE_FILE } from './modules/config.ts';
export { DEFAULT_FILES_ROOT, daemonPathsOf } from './modules/securityModule.ts';
export { type DaemonPaths, daemonPathOf } from '../machines/security/index.ts';
export { realDaemonPaths } from './security/realPaths.ts';
export { checkSecretName, SECRET_NAME, SECRETS_DIR, SecretVault, SecretVaultError } from '../adapters/secrets/secretVault.ts';
export { probeModel, type ProbeResult } from '../adapters/llm/modelProbe.ts';
export { BUILTIN_ADAPTERS } from '../adapters/llm/luaAdapter.ts';
export { checkSettings, type SettingsProblem, tooDeep } from './settings/checkSettings.ts';
export { SETTINGS_SCHEMA } from './settings/settingsSchema.ts';
export { modelSourcesOf, type SourceKey } from './settings/modelSourceKeys.ts';
export type { SettingsField } from './settings/settingsField.ts';
export { layoutMachine, type MachineLayout } from './inspect/machineLayout.ts';
export type { MachineWatch, WatchedActor, WatchedEvent } from './inspect/machineWatch.ts';
export { divergedBy, reportLines } from './replay/replayer.ts';
export { type BackgroundWork, TimeTravel, type StateAt } from './replay/timeTravel.ts';
export type { SqliteEventStore } from '../adapters/sqlite/sqliteEventStore.ts';
export { verifyProjections, type ProjectionVerdict } from './replay/verifyProjections.ts';
export { allProjections } from '../projections/index.ts';
export { nestsDeeperThan } from '../adapters/llm/jsonDepth.ts';
export { freeBytesOn } from '../adapters/files/logRoom.ts';
