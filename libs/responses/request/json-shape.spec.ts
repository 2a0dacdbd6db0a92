import { MAX_JSON_DEPTH } from './json-depth.js';
import { jsonShapeViolation } from './json-shape.js';
import { scanJsonShape } from './json-shape.scanner.js';

const wide = (n: number) => {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o[`k${i}`] = i;
  return o;
};

/** Both checks must agree: the byte scan (HTTP bodies) and the object walk (frames, embedding hosts). */
const both = (value: unknown, limits?: { depth?: number; keys?: number }) => {
  const text = JSON.stringify(value);
  return { scanned: scanJsonShape(Buffer.from(text), limits), walked: jsonShapeViolation(value, limits) };
};

describe('JSON shape limits (byte scan and object walk)', () => {
  it('allows exactly the key limit and names the object one key over', () => {
    expect(both({ a: wide(10) }, { keys: 10 })).toEqual({ scanned: null, walked: null });
    const over = { tools: [{ type: 'function', parameters: { properties: wide(11) } }] };
    const { scanned, walked } = both(over, { keys: 10 });
    expect(scanned).toEqual({ kind: 'keys', limit: 10, count: 11, path: 'tools[0].parameters.properties' });
    expect(walked).toEqual(scanned);
  });

  it('names the body itself for a wide top level, and indexes arrays by element', () => {
    expect(both(wide(11), { keys: 10 }).scanned).toMatchObject({ kind: 'keys', path: null, count: 11 });
    const arr = { input: [1, 'x,y', { a: 1 }, wide(11)] };
    expect(both(arr, { keys: 10 }).scanned).toMatchObject({ path: 'input[3]' });
    expect(both(arr, { keys: 10 }).walked).toMatchObject({ path: 'input[3]' });
  });

  it('ignores structure inside strings, escaped quotes included', () => {
    const tricky = { s: '{"a":1,"b":[[[[', t: 'quote \\" and : and {', u: '\\\\' };
    expect(both(tricky, { keys: 3, depth: 1 })).toEqual({ scanned: null, walked: null });
  });

  it('decodes escaped and non-ASCII keys in the path', () => {
    const value = { 'ké\\y"': { é: wide(3) } };
    expect(both(value, { keys: 2 }).scanned).toMatchObject({ path: 'ké\\y".é' });
  });

  it('refuses one level past the depth limit, and walks 100k levels without recursing', () => {
    const nested = (d: number) => '['.repeat(d) + ']'.repeat(d);
    expect(scanJsonShape(Buffer.from(nested(MAX_JSON_DEPTH)))).toBeNull();
    expect(scanJsonShape(Buffer.from(nested(MAX_JSON_DEPTH + 1)))).toEqual({ kind: 'depth', limit: MAX_JSON_DEPTH });
    expect(scanJsonShape(Buffer.from(nested(100_000)))).toEqual({ kind: 'depth', limit: MAX_JSON_DEPTH });
  });

  it('counts the elements of a limited top-level array, and only that one', () => {
    const limits = { topLevelArrays: { tools: 3 } };
    const body = (n: number, extra: Record<string, unknown> = {}) =>
      Buffer.from(JSON.stringify({ ...extra, tools: Array.from({ length: n }, (_, i) => ({ name: `t${i}`, list: [1, 2, 3, 4, 5] })) }));
    expect(scanJsonShape(body(3), limits)).toBeNull();
    expect(scanJsonShape(body(4), limits)).toEqual({ kind: 'items', limit: 3, path: 'tools' });
    // Other arrays, and a `tools` that is not at the top level, are not counted.
    expect(scanJsonShape(Buffer.from(JSON.stringify({ input: [1, 2, 3, 4, 5], nested: { tools: [1, 2, 3, 4, 5] }, tools: [] })), limits)).toBeNull();
    expect(scanJsonShape(Buffer.from(JSON.stringify({ tools: 'a,b,c,d,e', other: [1, 2, 3, 4, 5] })), limits)).toBeNull();
    expect(scanJsonShape(body(4, { model: 'm', input: ['a', 'b'] }), limits)).toMatchObject({ kind: 'items' });
  });

  it('costs time linear in the size: 10x the keys take less than 20x the time', () => {
    // The least CPU time of several runs: other load on the machine only ever adds.
    const time = (n: number) => {
      const bytes = Buffer.from(JSON.stringify(wide(n)));
      scanJsonShape(bytes, { keys: Infinity });
      let best = Infinity;
      for (let r = 0; r < 5; r++) {
        const start = process.cpuUsage();
        scanJsonShape(bytes, { keys: Infinity });
        const used = process.cpuUsage(start);
        best = Math.min(best, used.user + used.system);
      }
      return best;
    };
    expect(time(200_000) / time(20_000)).toBeLessThan(20);
  });
});
