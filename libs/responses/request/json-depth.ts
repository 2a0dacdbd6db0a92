/**
 * Request bodies nested deeper than this are refused with a 400. Past the
 * body parser, recursive walkers (class-transformer on the DTO, schema code,
 * the upstream's own parser) would overflow the stack on JSON a few thousand
 * levels deep and turn a bad request into a 500. Real bodies, JSON Schemas
 * of tool parameters included, stay far below.
 */
export const MAX_JSON_DEPTH = 256;

/** True when `value` has objects or arrays nested more than `limit` levels deep. Iterative: never recurses. */
export function exceedsJsonDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
