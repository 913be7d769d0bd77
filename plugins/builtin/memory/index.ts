/** The `memory` built-in plugin: the LLM-callable memory tools. */
export { memoryToolsPlugin, memoryManifest } from './memoryToolsPlugin.ts';
export type { MemoryToolsOptions } from './memoryTool.ts';
export { InvalidMemoryArgument, MediaWithoutSentence, UnknownEntity, UnknownRelation } from './errors.ts';
