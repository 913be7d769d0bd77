/** Which handlers run in a stage: `own_tools` handlers only around tools their own plugin registered. Pure. */
import { TOOL_STAGES, type HandlerRef, type StageName, type ToolScope } from './stageTypes.ts';

/**
 * Why `handler` does not run in this stage, or null when it runs.
 * @example skipReason({ id: 'h', plugin: 'qq', scope: 'own_tools' }, 'on_input', undefined) // 'own_tools handlers run only in ...'
 */
export const skipReason = (handler: HandlerRef, stage: StageName, scope: ToolScope | undefined): string | null => {
  if (handler.scope === 'global') return null;
  if (!TOOL_STAGES.includes(stage)) return `own_tools handlers run only in ${TOOL_STAGES.join(' and ')}, not in ${stage}`;
  if (!scope) return 'no tool scope was given';
  if (scope.ownerPlugin !== handler.plugin) return `tool '${scope.toolName}' belongs to plugin '${scope.ownerPlugin}'`;
  return null;
};
