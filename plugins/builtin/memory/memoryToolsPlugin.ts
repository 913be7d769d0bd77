/** `plugins.memory.adminTools`: offer the tools that rewrite or delete the graph (off by default). */
export const MEMORY_ADMIN_TOOLS_SETTING = 'plugins.memory.adminTools';

/** The tools that rewrite or delete what the graph holds: offered only when the user turns them on. */
export const MEMORY_ADMIN_TOOLS: readonly string[] = ['memory_merge', 'memory_purge', 'memory_edit', 'memory_delete_entity'];

/**
 * The `memory` built-in plugin: the LLM-callable memory tools on the memory (the admin ones
 * only with `plugins.memory.adminTools`). Every
 * change is an event recorded through the memory (`record`, `peekCold`, `restoreCold`); the
 * tools only read the read models to decide. A bad argument comes back as an isError reply.
 */
import type { Memory } from '../../../actors/index.ts';
import type { BuiltinPlugin } from '../../sdk/builtinPlugin.ts';
import type { PluginManifest } from '../../sdk/manifestTypes.ts';
import { graphTools } from './graphTools.ts';
import type { MemoryToolsOptions } from './memoryTool.ts';
import { recallTools } from './recallTools.ts';
import { replyOrRefuse } from '../shared/replyOrRefuse.ts';

export const memoryManifest: PluginManifest = {
  name: 'memory',
  version: '0.1.0',
  entry: 'builtin:memory',
  kind: 'builtin',
  platforms: [],
  requires_facilities: [],
  capabilities: ['tools'],
  auto_start: true,
  auto_restart: true,
  description: 'Memory tools: recall, commit, merge, purge, edit and delete in the knowledge graph; query and commit cold context.',
};

export const memoryToolsPlugin = (memory: Memory, options: MemoryToolsOptions): BuiltinPlugin => ({
  manifest: memoryManifest,
  async start(api) {
    const context = { ...options, memory };
    const offered = [...recallTools(context), ...graphTools(context)].filter(
      (tool) => options.adminTools || !MEMORY_ADMIN_TOOLS.includes(tool.spec.name),
    );
    for (const tool of offered) {
      await api.registerTool(tool.spec, (args, call) => replyOrRefuse(() => tool.run(args, call)));
    }
    return { async stop() {} };
  },
});
