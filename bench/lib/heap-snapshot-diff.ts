import { readFileSync } from 'node:fs';
import { codeOrigin } from './code-origin.js';

/**
 * Reads two V8 heap snapshots (`v8.writeHeapSnapshot`) of one process and
 * groups what is in the second and not in the first (node ids are stable
 * across snapshots of one process) by what it is, so that the bytes a held
 * request keeps can be named: by node kind and constructor, and closures by
 * the script that defined them, each charged with its context when that
 * context is new too (a context holds the captured variables and is often
 * the larger half; one shared by several closures is charged once).
 */
interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapGroup {
  key: string;
  count: number;
  bytes: number;
}

export interface HeapDiff {
  newObjects: number;
  newBytes: number;
  /** By node kind and name (constructor for objects); strings, code and numbers each in one group. */
  byKind: HeapGroup[];
  /** New closures (with their new contexts) by the package or gateway file that defined them. */
  closuresByOrigin: HeapGroup[];
}

/** A snapshot's self size by node id and, when described, each node's group key; closures carry their origin and context. */
interface Indexed {
  sizeById: Map<number, number>;
  nodes: Array<{ id: number; key: string; size: number; origin?: string; contextId?: number }>;
}

/** `describe: false` reads only ids and sizes: the first snapshot is only asked what it already had. */
function index(path: string, describe: boolean): Indexed {
  const raw = JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot;
  const { node_fields: nodeFields, node_types: nodeTypes, edge_fields: edgeFields, edge_types: edgeTypes } = raw.snapshot.meta;
  const nf = nodeFields.length;
  const ef = edgeFields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => nodeFields.indexOf(f));
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f));
  const kinds = nodeTypes[0];
  const edgeKinds = edgeTypes[0];
  const { nodes, edges, strings } = raw;
  const firstEdge = new Uint32Array(nodes.length / nf);
  for (let i = 0, e = 0; i < nodes.length; i += nf) {
    firstEdge[i / nf] = e;
    e += nodes[i + edgeCountAt] * ef;
  }
  /** The node a named edge of `node` points to (node offsets, as the edges store them). */
  const edgeTo = (node: number, name: string): number | undefined => {
    const start = firstEdge[node / nf];
    for (let k = 0; k < nodes[node + edgeCountAt]; k++) {
      const o = start + k * ef;
      const kind = edgeKinds[edges[o + edgeTypeAt]];
      if (kind !== 'element' && kind !== 'hidden' && strings[edges[o + edgeNameAt]] === name) return edges[o + edgeToAt];
    }
    return undefined;
  };
  const scriptOf = (closure: number): string => {
    const shared = edgeTo(closure, 'shared');
    const script = shared === undefined ? undefined : edgeTo(shared, 'script_or_debug_info');
    return script === undefined ? '' : strings[nodes[script + nameAt]];
  };
  const out: Indexed = { sizeById: new Map(), nodes: [] };
  for (let i = 0; i < nodes.length; i += nf) {
    const id = nodes[i + idAt];
    const size = nodes[i + sizeAt];
    out.sizeById.set(id, size);
    if (!describe) continue;
    const kind = kinds[nodes[i + typeAt]];
    const name = strings[nodes[i + nameAt]];
    if (kind === 'closure') {
      const bound = name === 'native_bind' ? edgeTo(i, 'bound_function') : undefined;
      const target = bound ?? i;
      const context = edgeTo(i, 'context');
      out.nodes.push({
        id,
        key: bound === undefined ? `closure ${name || '(anonymous)'}` : `bound ${strings[nodes[bound + nameAt]] || '(anonymous)'}`,
        size,
        origin: codeOrigin(scriptOf(target), '(no script)'),
        contextId: context === undefined ? undefined : nodes[context + idAt],
      });
      continue;
    }
    const key = kind.endsWith('string') ? '(strings)' : kind === 'code' ? '(code)' : kind === 'number' ? '(heap numbers)' : `${kind} ${name}`;
    out.nodes.push({ id, key, size });
  }
  return out;
}

function sorted(groups: Map<string, HeapGroup>): HeapGroup[] {
  return [...groups.values()].sort((a, b) => b.bytes - a.bytes);
}

function add(groups: Map<string, HeapGroup>, key: string, bytes: number): void {
  const group = groups.get(key) ?? { key, count: 0, bytes: 0 };
  group.count += 1;
  group.bytes += bytes;
  groups.set(key, group);
}

export function diffHeapSnapshots(beforePath: string, afterPath: string): HeapDiff {
  const before = index(beforePath, false).sizeById;
  const after = index(afterPath, true);
  const byKind = new Map<string, HeapGroup>();
  const byOrigin = new Map<string, HeapGroup>();
  // A context several closures share is charged once, to the first of them.
  const charged = new Set<number>();
  let newObjects = 0;
  let newBytes = 0;
  for (const node of after.nodes) {
    if (before.has(node.id)) continue;
    newObjects++;
    newBytes += node.size;
    add(byKind, node.key, node.size);
    if (node.origin === undefined) continue;
    const fresh = node.contextId !== undefined && !before.has(node.contextId) && !charged.has(node.contextId);
    if (fresh) charged.add(node.contextId!);
    const context = fresh ? (after.sizeById.get(node.contextId!) ?? 0) : 0;
    add(byOrigin, node.origin, node.size + context);
  }
  return { newObjects, newBytes, byKind: sorted(byKind), closuresByOrigin: sorted(byOrigin) };
}
