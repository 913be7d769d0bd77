/**
 * A statechart drawn from a machine's definition: its states as nested boxes and its
 * transitions as arrows labelled with their events, placed by elkjs (layered, left to right).
 * Computed in the daemon, once per machine, so the browser only draws the boxes it is given.
 */
import { createRequire } from 'node:module';

type Elk = { layout(graph: unknown): Promise<unknown> };
// elkjs is CommonJS whose export is the class; its types say otherwise under NodeNext.
const ELK = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js') as new () => Elk;

export type LaidOutState = Readonly<{
  id: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** atomic, compound, parallel, final, history */
  kind: string;
  initial: boolean;
}>;
export type LaidOutTransition = Readonly<{
  id: string;
  source: string;
  target: string;
  label: string;
  points: readonly [number, number][];
}>;
export type MachineLayout = Readonly<{
  machine: string;
  width: number;
  height: number;
  states: readonly LaidOutState[];
  transitions: readonly LaidOutTransition[];
}>;

/** A machine's states as the layout reads them (from its state nodes: XState's JSON leaves out eventless transitions). */
type StateJson = {
  id: string;
  key: string;
  type: string;
  initial: readonly string[];
  states: readonly StateJson[];
  transitions: readonly { label: string; targets: readonly string[] }[];
};

type StateNodeLike = {
  id: string;
  key: string;
  type: string;
  initial?: { target?: readonly { id: string }[] };
  states?: Readonly<Record<string, StateNodeLike>>;
  transitions?: ReadonlyMap<string, readonly { target?: readonly { id: string }[] }[]>;
  always?: readonly { target?: readonly { id: string }[] }[];
};

const graphOf = (node: StateNodeLike): StateJson => ({
  id: node.id,
  key: node.key,
  type: node.type,
  initial: (node.initial?.target ?? []).map((t) => t.id),
  states: Object.values(node.states ?? {}).map(graphOf),
  transitions: [
    ...[...(node.transitions?.entries() ?? [])].flatMap(([event, ts]) =>
      ts.map((t) => ({ label: event, targets: (t.target ?? []).map((x) => x.id) })),
    ),
    ...(node.always ?? []).map((t) => ({ label: 'always', targets: (t.target ?? []).map((x) => x.id) })),
  ],
});

type ElkNode = {
  id: string;
  width?: number;
  height?: number;
  x?: number;
  y?: number;
  labels?: { text: string; width: number; height: number }[];
  children?: ElkNode[];
  edges?: ElkEdge[];
  layoutOptions?: Record<string, string>;
};
type ElkEdge = {
  id: string;
  sources: string[];
  targets: string[];
  labels?: { text: string; width: number; height: number; x?: number; y?: number }[];
  sections?: { startPoint: { x: number; y: number }; endPoint: { x: number; y: number }; bendPoints?: { x: number; y: number }[] }[];
};

const CHAR_WIDTH = 7;
const STATE_HEIGHT = 30;
const labelWidth = (text: string): number => 16 + text.length * CHAR_WIDTH;

const elk = new ELK();

/** The state's transitions that go somewhere (targetless ones stay in the state: no arrow). */
const arrowsOf = (state: StateJson): { source: string; target: string; label: string }[] =>
  state.transitions.flatMap((t) => t.targets.map((target) => ({ source: state.id, target, label: t.label })));

/** `machine`: an XState machine (its `root` state node is read). */
export const layoutMachine = async (machine: Readonly<{ id: string; root: unknown }>): Promise<MachineLayout> => {
  const root = graphOf(machine.root as StateNodeLike);
  const kinds = new Map<string, { kind: string; label: string; initial: boolean }>();
  const edges: ElkEdge[] = [];
  const nodeOf = (state: StateJson, initial: boolean): ElkNode => {
    kinds.set(state.id, { kind: state.type, label: state.key, initial });
    const children = state.states;
    const initialTargets = new Set(state.initial);
    for (const arrow of arrowsOf(state)) {
      const text = arrow.label;
      edges.push({
        id: `e${edges.length}`,
        sources: [arrow.source],
        targets: [arrow.target],
        labels: [{ text, width: labelWidth(text) - 10, height: 14 }],
      });
    }
    if (children.length === 0) return { id: state.id, width: labelWidth(state.key), height: STATE_HEIGHT };
    return {
      id: state.id,
      labels: [{ text: state.key, width: labelWidth(state.key), height: 16 }],
      layoutOptions: { 'elk.padding': '[top=28,left=12,bottom=12,right=12]', 'elk.nodeLabels.placement': 'INSIDE V_TOP H_LEFT' },
      children: children.map((child) => nodeOf(child, initialTargets.has(child.id))),
    };
  };
  const top = nodeOf(root, true);
  const graph: ElkNode = {
    id: '__root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.layered.spacing.nodeNodeBetweenLayers': '50',
      'elk.spacing.nodeNode': '24',
      'elk.edgeLabels.inline': 'true',
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'ROOT',
    },
    children: [top],
    edges,
  };
  const laid = (await elk.layout(graph)) as ElkNode & { width: number; height: number };
  const states: LaidOutState[] = [];
  const walk = (node: ElkNode): void => {
    const known = kinds.get(node.id);
    if (known) {
      states.push({ id: node.id, x: node.x ?? 0, y: node.y ?? 0, width: node.width ?? 0, height: node.height ?? 0, ...known });
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(laid);
  const transitions = (laid.edges ?? []).map((edge) => {
    const section = edge.sections?.[0];
    const points: [number, number][] = section
      ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => [p.x, p.y])
      : [];
    return { id: edge.id, source: edge.sources[0]!, target: edge.targets[0]!, label: edge.labels?.[0]?.text ?? '', points };
  });
  return { machine: machine.id, width: laid.width, height: laid.height, states, transitions };
};
