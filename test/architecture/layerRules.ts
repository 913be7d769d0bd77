/** The layer rules (which top-level folder may import which), as functions over paths and source text so each can be tested itself. */
import { posix } from 'node:path';
import { codeOf, importsOf } from './sourceRules.ts';

/**
 * Per top-level folder, what it may import besides itself: `'x/'` is a whole folder, `'x/y.ts'`
 * one file of it, `'anything'` any of ours.
 */
export type LayerMatrix = Readonly<Record<string, readonly string[] | 'anything'>>;

export const topFolderOf = (path: string): string => path.split('/')[0]!;

const describeAllowed = (allowed: readonly string[]): string => (allowed.length === 0 ? 'nothing of ours' : allowed.join(', '));

/** Where a relative import of `file` points, relative to the repo root (`file` is too). */
export const resolveImport = (file: string, specifier: string): string => posix.normalize(posix.join(posix.dirname(file), specifier));

/** The relative imports of one file, resolved: bare package and `node:` imports are not layers. */
export const ourImportsOf = (file: string, source: string): { specifier: string; target: string }[] =>
  importsOf(codeOf(source))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => ({ specifier, target: resolveImport(file, specifier) }));

/** Every import of `file` its folder's row does not allow, as `file imports 'specifier' (target): why`. */
export const layerViolations = (file: string, source: string, matrix: LayerMatrix): string[] => {
  const folder = topFolderOf(file);
  const allowed = matrix[folder];
  if (allowed === undefined) return [`${file}: its folder '${folder}/' has no row in the layer matrix`];
  if (allowed === 'anything') return [];
  return ourImportsOf(file, source).flatMap(({ specifier, target }) => {
    if (target.startsWith('../')) return [`${file} imports '${specifier}' (${target}), which is outside the repo`];
    if (topFolderOf(target) === folder) return [];
    if (allowed.some((entry) => (entry.endsWith('/') ? target.startsWith(entry) : target === entry))) return [];
    return [`${file} imports '${specifier}' (${target}): ${folder}/ may import only ${describeAllowed(allowed)}`];
  });
};

/** Folder → folder → one import that makes the edge (`file imports 'specifier'`). */
export type FolderGraph = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** Every cycle among folders, one per strongly connected group, as `a → b → a (a/x.ts imports '…'; …)`. */
export const folderCycles = (graph: FolderGraph): string[] => {
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flatMap((to) => [...to.keys()])])].sort();
  const next = (node: string) => [...(graph.get(node)?.keys() ?? [])].filter((to) => to !== node).sort();
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      for (const n of next(stack.pop()!)) {
        if (n === to) return true;
        if (seen.has(n)) continue;
        seen.add(n);
        stack.push(n);
      }
    }
    return false;
  };
  const reported = new Set<string>();
  const cycles: string[] = [];
  for (const start of nodes) {
    if (reported.has(start) || !reaches(start, start)) continue;
    // The shortest way back to `start`, by breadth-first search.
    const via = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const node = queue.shift()!;
      for (const n of next(node)) {
        if (n === start) {
          last = node;
          break;
        }
        if (via.has(n)) continue;
        via.set(n, node);
        queue.push(n);
      }
    }
    const path = [start];
    for (let n = last!; n !== start; n = via.get(n)!) path.splice(1, 0, n);
    path.push(start);
    const group = nodes.filter((n) => reaches(start, n) && reaches(n, start));
    for (const n of group) reported.add(n);
    const edges = path.slice(1).map((to, at) => graph.get(path[at]!)!.get(to)!);
    cycles.push(`${path.join(' → ')} (${edges.join('; ')})`);
  }
  return cycles;
};
