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
  /**
   * New out-of-object property stores, dictionary-mode property tables and
   * boxed doubles, by the constructor of the object that owns them (a heap
   * number also by the property that holds it): which objects grew after
   * construction, went into dictionary mode or keep a double field.
   */
  storesByOwner: HeapGroup[];
}

/** Node keys whose cost belongs to the object that owns them rather than to themselves. */
const OWNED_KEYS = new Set(['hidden system / PropertyArray', 'array (object properties)', '(heap numbers)']);

/** A snapshot's self size by node id and, when described, each node's group key; closures carry their origin and context. */
interface Indexed {
  sizeById: Map<number, number>;
  nodes: Array<{ id: number; key: string; size: number; origin?: string; contextId?: number; owner?: string }>;
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
  if (describe) nameOwners(out, raw, firstEdge);
  return out;
}

/**
 * Gives each node of an `OWNED_KEYS` kind the name of the object that holds
 * it: the first strong edge to it, looking through a property store to the
 * object whose store it is. A heap number also names the property (V8 records
 * a field's edge from the object itself, under the property's name).
 */
function nameOwners(out: Indexed, raw: RawSnapshot, firstEdge: Uint32Array): void {
  const { node_fields: nodeFields, edge_fields: edgeFields, edge_types: edgeTypes } = raw.snapshot.meta;
  const nf = nodeFields.length;
  const ef = edgeFields.length;
  const edgeCountAt = nodeFields.indexOf('edge_count');
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f));
  const { nodes, edges, strings } = raw;
  // A described snapshot has one entry per node, in the snapshot's order: the key `index` gave it.
  const keyOf = (node: number): string => out.nodes[node / nf].key;
  // Every store and number, new or not: a new number may sit in an old store.
  const owner = new Map<number, { from: number; edge: string }>();
  for (let i = 0; i < nodes.length; i += nf) {
    if (OWNED_KEYS.has(keyOf(i))) owner.set(i, { from: -1, edge: '' });
  }
  for (let from = 0; from < nodes.length; from += nf) {
    const start = firstEdge[from / nf];
    for (let k = 0; k < nodes[from + edgeCountAt]; k++) {
      const o = start + k * ef;
      const hit = owner.get(edges[o + edgeToAt]);
      if (hit === undefined) continue;
      const kind = edgeTypes[0][edges[o + edgeTypeAt]];
      if (kind === 'weak' || kind === 'shortcut') continue;
      const name = kind === 'element' || kind === 'hidden' ? '' : strings[edges[o + edgeNameAt]];
      // A named property edge beats the store's anonymous one, so a number gets its field's name.
      if (hit.from < 0 || (hit.edge === '' && name !== '' && kind === 'property')) owner.set(edges[o + edgeToAt], { from, edge: kind === 'property' ? name : '' });
    }
  }
  for (const [at, { from, edge }] of owner) {
    const node = out.nodes[at / nf];
    let holder = from;
    // Look through a property store (and a store of a store) to the object it belongs to.
    for (let hops = 0; holder >= 0 && OWNED_KEYS.has(keyOf(holder)) && hops < 3; hops++) holder = owner.get(holder)?.from ?? -1;
    const name = holder < 0 ? '(no owner)' : keyOf(holder);
    node.owner = `${node.key} of ${name}${node.key === '(heap numbers)' && edge ? `.${edge}` : ''}`;
  }
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
  const byOwner = new Map<string, HeapGroup>();
  // A context several closures share is charged once, to the first of them.
  const charged = new Set<number>();
  let newObjects = 0;
  let newBytes = 0;
  for (const node of after.nodes) {
    if (before.has(node.id)) continue;
    newObjects++;
    newBytes += node.size;
    add(byKind, node.key, node.size);
    if (node.owner !== undefined) add(byOwner, node.owner, node.size);
    if (node.origin === undefined) continue;
    const fresh = node.contextId !== undefined && !before.has(node.contextId) && !charged.has(node.contextId);
    if (fresh) charged.add(node.contextId!);
    const context = fresh ? (after.sizeById.get(node.contextId!) ?? 0) : 0;
    add(byOrigin, node.origin, node.size + context);
  }
  return { newObjects, newBytes, byKind: sorted(byKind), closuresByOrigin: sorted(byOrigin), storesByOwner: sorted(byOwner) };
}
