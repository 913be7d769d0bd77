/**
 * Dependencies point one way (DESIGN, "Folders"): each top-level folder imports only what its
 * row allows, plugins reach the running system only through its public surface
 * (actors/index.ts), and no two folders depend on each other in a cycle.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderCycles, layerViolations, ourImportsOf, topFolderOf, type FolderGraph, type LayerMatrix } from './layerRules.ts';
import { readSource, sourceFiles } from './sourceRules.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const LAYERS: LayerMatrix = {
  events: [],
  machines: ['events/'],
  projections: ['events/'],
  adapters: ['events/'],
  actors: ['events/', 'machines/', 'projections/', 'adapters/'],
  plugins: ['events/', 'actors/index.ts'],
  // The composition root (homed and waiter) and the tooling around the system.
  cli: 'anything',
  bin: 'anything',
  bench: 'anything',
  test: 'anything',
};

/** bench/ and test/ lend each other helpers (the fake LLM server, the LoCoMo scorer's tests): one node for the cycle check. */
const cycleNode = (folder: string): string => (folder === 'bench' || folder === 'test' ? 'bench+test' : folder);

const ours = (folder: string) => sourceFiles(ROOT, folder, { withTests: true });

describe('the layers', () => {
  it('every top-level folder with sources has a row in the matrix', () => {
    const folders = readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules')
      .map((entry) => entry.name)
      .filter((folder) => ours(folder).length > 0);
    expect(folders.filter((folder) => !(folder in LAYERS))).toEqual([]);
  });

  for (const [folder, allowed] of Object.entries(LAYERS)) {
    if (allowed === 'anything') continue;
    it(`${folder}/ imports only ${allowed.length === 0 ? 'nothing of ours' : allowed.join(', ')}`, () => {
      const files = ours(folder);
      expect(files.length).toBeGreaterThan(0);
      expect(files.flatMap((file) => layerViolations(file, readSource(ROOT, file), LAYERS))).toEqual([]);
    });
  }

  it('no top-level folders import each other in a cycle', () => {
    const graph = new Map<string, Map<string, string>>();
    for (const folder of Object.keys(LAYERS)) {
      for (const file of ours(folder)) {
        for (const { specifier, target } of ourImportsOf(file, readSource(ROOT, file))) {
          const [from, to] = [cycleNode(folder), cycleNode(topFolderOf(target))];
          if (from === to) continue;
          const edges = graph.get(from) ?? new Map<string, string>();
          if (!edges.has(to)) edges.set(to, `${file} imports '${specifier}'`);
          graph.set(from, edges);
        }
      }
    }
    expect(graph.get('cli')?.has('actors')).toBe(true); // the graph is really built
    expect(folderCycles(graph)).toEqual([]);
  });

  it('the rule itself catches each kind of violation', () => {
    const check = (file: string, source: string) => layerViolations(file, source, LAYERS);
    // The core depends on nothing outward.
    expect(check('events/x.ts', "import { m } from '../machines/scheduler/index.ts';")).toEqual([
      "events/x.ts imports '../machines/scheduler/index.ts' (machines/scheduler/index.ts): events/ may import only nothing of ours",
    ]);
    expect(check('events/catalog/x.ts', "import type { A } from '../../adapters/sqlite/openDatabase.ts';")).toHaveLength(1);
    expect(check('machines/turn/x.ts', "import { f } from '../../actors/index.ts';")).toHaveLength(1);
    expect(check('machines/turn/x.ts', "import { p } from '../../projections/index.ts';")).toHaveLength(1);
    expect(check('projections/memory/x.ts', "import { m } from '../../machines/memory/heartbeatMachine.ts';")).toHaveLength(1);
    expect(check('adapters/llm/x.ts', "import { a } from '../../actors/llm/llmFacility.ts';")).toHaveLength(1);
    // The running system never reaches up into plugins or the composition root.
    expect(check('actors/kernel/x.ts', "import { PluginHost } from '../../plugins/host/pluginHost.ts';")).toHaveLength(1);
    expect(check('actors/x.ts', "import { parse } from '../cli/args.ts';")).toHaveLength(1);
    // Plugins see actors only through actors/index.ts, and never machines, projections, adapters or cli directly.
    expect(check('plugins/host/x.ts', "import { pluginSupervisorMachine } from '../../machines/pluginSupervisor/index.ts';")).toEqual([
      "plugins/host/x.ts imports '../../machines/pluginSupervisor/index.ts' (machines/pluginSupervisor/index.ts): plugins/ may import only events/, actors/index.ts",
    ]);
    expect(check('plugins/x.ts', "import { f } from '../projections/plugins/pluginRegistry.ts';")).toHaveLength(1);
    expect(check('plugins/lua/x.ts', "import { LuaVm } from '../../adapters/llm/luaVm.ts';")).toHaveLength(1);
    expect(check('plugins/sdk/x.ts', "export { Facility } from '../../actors/kernel/facilities.ts';")).toHaveLength(1);
    expect(check('plugins/host/x.ts', "const m = await import('../../cli/dataDir.ts');")).toHaveLength(1);
    expect(check('plugins/host/x.ts', "import '../../actors/modules/config.ts';")).toHaveLength(1);
    expect(check('plugins/host/x.ts', "import {\n  a,\n  b,\n} from '../../machines/turn/index.ts';")).toHaveLength(1);
    expect(check('plugins/x.ts', "import { x } from '../../elsewhere/x.ts';")).toEqual([
      "plugins/x.ts imports '../../elsewhere/x.ts' (../elsewhere/x.ts), which is outside the repo",
    ]);
    // Allowed: the rows' own entries, the folder itself, packages, the composition root and tooling, comments.
    expect(
      check('plugins/host/x.ts', "import { Facility } from '../../actors/index.ts';\nimport { E } from '../../events/index.ts';"),
    ).toEqual([]);
    expect(check('plugins/host/x.ts', "import { PluginConnection } from '../protocol/index.ts';")).toEqual([]);
    expect(
      check(
        'actors/x.ts',
        "import { m } from '../machines/a.ts';\nimport { p } from '../projections/b.ts';\nimport { d } from '../adapters/c.ts';",
      ),
    ).toEqual([]);
    expect(check('machines/x.ts', "import { setup } from 'xstate';\nimport { join } from 'node:path';")).toEqual([]);
    expect(check('cli/x.ts', "import { PluginHost } from '../plugins/host/pluginHost.ts';\nimport { m } from '../machines/a.ts';")).toEqual(
      [],
    );
    expect(check('test/plugins/x.test.ts', "import { m } from '../../machines/a.ts';")).toEqual([]);
    expect(check('plugins/x.ts', "// import { m } from '../machines/a.ts';\n/* import { p } from '../projections/b.ts'; */")).toEqual([]);
    expect(check('nowhere/x.ts', '')).toEqual(["nowhere/x.ts: its folder 'nowhere/' has no row in the layer matrix"]);
  });

  it('the cycle check itself finds a cycle and names the imports that make it', () => {
    const graph: FolderGraph = new Map([
      ['a', new Map([['b', "a/x.ts imports '../b/y.ts'"]])],
      ['b', new Map([['c', "b/y.ts imports '../c/z.ts'"]])],
      ['c', new Map([['a', "c/z.ts imports '../a/x.ts'"]])],
      ['d', new Map([['a', "d/w.ts imports '../a/x.ts'"]])],
    ]);
    expect(folderCycles(graph)).toEqual([
      "a → b → c → a (a/x.ts imports '../b/y.ts'; b/y.ts imports '../c/z.ts'; c/z.ts imports '../a/x.ts')",
    ]);
    expect(folderCycles(new Map([['a', new Map([['b', 'x']])]]))).toEqual([]);
  });
});
