/** The `memory` built-in plugin: the LLM-callable memory tools. */
export { MEMORY_ADMIN_TOOLS, MEMORY_ADMIN_TOOLS_SETTING, memoryManifest, memoryToolsPlugin } from './memoryToolsPlugin.ts';
export type { MemoryToolsOptions } from './memoryTool.ts';
export { InvalidMemoryArgument, MediaWithoutSentence, UnknownEntity, UnknownRelation } from './errors.ts';
