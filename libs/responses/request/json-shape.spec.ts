import { MAX_JSON_DEPTH } from './json-depth.js';
import { jsonShapeViolation } from './json-shape.js';
import fc from 'fast-check';
import { JsonShapeScanner, scanJsonShape, type JsonShapeLimits } from './json-shape.scanner.js';

const wide = (n: number) => {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o[`k${i}`] = i;
  return o;
};

/**
 * `bytes` with its own `indexOf` counting how many bytes each native search reads: from where it
 * starts to what it finds, or to the end. The scan finds string ends with it; the loop around it reads
 * each other byte once. Only this one buffer counts: nothing shared is patched.
 */
const countingSearches = (bytes: Buffer): { bytes: Buffer; read: () => number } => {
  let read = 0;
  const search = bytes.indexOf.bind(bytes);
  Object.defineProperty(bytes, 'indexOf', {
    value: (value: string | number | Uint8Array, from = 0, encoding?: BufferEncoding): number => {
      const at = search(value, from, encoding);
      read += Math.max(0, (at === -1 ? bytes.length : at + 1) - from);
      return at;
    },
  });
  return { bytes, read: () => read };
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

  it('reads 2 000, 20 000 and 200 000 keys to the same verdicts, whole or in socket-sized chunks', () => {
    // How the scan's time grows with the keys is a speed: `bench/json-shape-scan.bench.ts` measures it.
    for (const n of [2_000, 20_000, 200_000]) {
      const bytes = Buffer.from(JSON.stringify({ tools: [{ type: 'function', parameters: { properties: wide(n) } }] }));
      const over = { kind: 'keys', limit: n - 1, count: n, path: 'tools[0].parameters.properties' };
      expect(scanJsonShape(bytes, { keys: n })).toBeNull();
      expect(scanJsonShape(bytes, { keys: n - 1 })).toEqual(over);
      const scanner = new JsonShapeScanner({ keys: n - 1 });
      for (let at = 0; at < bytes.length; at += 64 * 1024) scanner.push(bytes.subarray(at, at + 64 * 1024));
      expect(scanner.result).toEqual(over);
    }
  });

  it('reads each byte of the body a bounded number of times: its native searches never re-read what they passed', () => {
    // A count, not a time: a search that started over from each string (for an escape, say) reads
    // the rest of the body once per string, a thousand times the body at 2 000 keys already.
    for (const n of [2_000, 20_000, 200_000]) {
      const { bytes, read } = countingSearches(Buffer.from(JSON.stringify({ a: 'quote \\" in', wide: wide(n), z: 'x' })));
      expect(scanJsonShape(bytes, { keys: Infinity })).toBeNull();
      expect(read()).toBeGreaterThan(0);
      expect(read()).toBeLessThanOrEqual(3 * bytes.length);
    }
  });

  describe('fed chunk by chunk, as an HTTP body arrives', () => {
    /** The scan of `bytes` cut at `cuts`, one push per piece. */
    const inPieces = (bytes: Buffer, cuts: number[], limits?: JsonShapeLimits) => {
      const scanner = new JsonShapeScanner(limits);
      let from = 0;
      for (const cut of [...cuts].sort((a, b) => a - b)) {
        scanner.push(bytes.subarray(from, cut));
        from = cut;
      }
      scanner.push(bytes.subarray(from));
      return scanner.result;
    };

    it('finds what one pass finds, wherever the chunks are cut (escapes, strings, keys and brackets cut too)', () => {
      const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('tools', 'k\\"', 'é"{[', 'constructor'));
      const value = fc.letrec<{ node: unknown }>((tie) => ({
        node: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          fc.string({ maxLength: 8 }),
          fc.integer(),
          fc.array(tie('node'), { maxLength: 5 }),
          fc.dictionary(key, tie('node'), { maxKeys: 5 }),
        ),
      })).node;
      const limits = fc.record({ depth: fc.integer({ min: 1, max: 5 }), keys: fc.integer({ min: 1, max: 4 }), topLevelArrays: fc.constant({ tools: 3 }) });
      fc.assert(
        fc.property(value, limits, fc.array(fc.nat(), { maxLength: 8 }), (node, lim, rawCuts) => {
          const bytes = Buffer.from(JSON.stringify({ tools: [1, 2], body: node }));
          const cuts = rawCuts.map((c) => c % (bytes.length + 1));
          expect(inPieces(bytes, cuts, lim)).toEqual(scanJsonShape(bytes, lim));
        }),
        { seed: 1101, numRuns: 2_000 },
      );
    });

    it('finds the bytes of the top-level tools array, the one JSON.parse keeps, wherever the chunks are cut', () => {
      const tool = fc.dictionary(fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('tools', 'a"]', 'é[')), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      const spacing = fc.constantFrom(undefined, 1, '\t');
      fc.assert(
        fc.property(
          fc.array(tool, { maxLength: 4 }),
          fc.array(tool, { maxLength: 2 }),
          fc.boolean(),
          spacing,
          fc.array(fc.nat(), { maxLength: 6 }),
          (tools, earlier, repeated, space, rawCuts) => {
            // A repeated key: the parser keeps the last value, so the scan must name the last array.
            const head = repeated ? `{"tools": ${JSON.stringify(earlier, null, space)}, ` : '{';
            const text = `${head}"nested": {"tools": [1]}, "tools": ${JSON.stringify(tools, null, space)}, "after": "]"}`;
            const bytes = Buffer.from(text);
            const scanner = new JsonShapeScanner({ topLevelArrays: { tools: 100 } });
            let from = 0;
            for (const cut of rawCuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b)) {
              scanner.push(bytes.subarray(from, cut));
              from = cut;
            }
            scanner.push(bytes.subarray(from));
            const span = scanner.span('tools')!;
            expect(JSON.parse(bytes.subarray(span.start, span.end).toString('utf8'))).toEqual(JSON.parse(text).tools);
          },
        ),
        { seed: 2902, numRuns: 1_000 },
      );
    });

    it('finds the end of strings full of escapes the same in a Buffer and in a plain Uint8Array, cut anywhere', () => {
      const key = 'k\\"' + '\\'.repeat(5);
      const value = { a: '\\"\\\\"', b: { [key]: { c: 1, d: 2, e: 3 } }, f: 'x"'.repeat(40) };
      const bytes = Buffer.from(JSON.stringify(value));
      expect(scanJsonShape(bytes, { keys: 3 })).toBeNull();
      const over = scanJsonShape(bytes, { keys: 2 });
      expect(over).toEqual({ kind: 'keys', limit: 2, count: 3, path: `b.${key}` });
      expect(scanJsonShape(new Uint8Array(bytes), { keys: 2 })).toEqual(over);
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(inPieces(bytes, [cut, cut + 1], { keys: 3 })).toBeNull();
        expect(inPieces(bytes, [cut], { keys: 2 })).toEqual(over);
        const view = new Uint8Array(bytes);
        const scanner = new JsonShapeScanner({ keys: 2 });
        scanner.push(view.subarray(0, cut));
        expect(scanner.push(view.subarray(cut))).toEqual(over);
      }
    });

    it('names a key that a chunk boundary cut in two, and one longer than what is kept', () => {
      const value = { outer_key_name: { inner: wide(3) } };
      const bytes = Buffer.from(JSON.stringify(value));
      for (let cut = 1; cut < bytes.length; cut++) {
        expect(inPieces(bytes, [cut], { keys: 2 })).toMatchObject({ kind: 'keys', path: 'outer_key_name.inner' });
      }
      const long = 'k'.repeat(1_000);
      const cut = inPieces(Buffer.from(JSON.stringify({ [long]: wide(3) })), [300, 700], { keys: 2 });
      expect(cut).toMatchObject({ kind: 'keys' });
      expect((cut as { path: string }).path.startsWith('kkkk')).toBe(true);
    });

    describe('with known arrays (the bytes of tool lists that passed before)', () => {
      const tools = [
        { type: 'function', name: 'a', parameters: { type: 'object', properties: { q: { type: 'string', description: 'say "hi" \\ [' } } } },
        { type: 'function', name: 'b' },
      ];
      const known = { bytes: Buffer.from(JSON.stringify(tools)), digest: 'digest-of-a-b' };
      const limits: JsonShapeLimits = { keys: 3, topLevelArrays: { tools: 3 } };
      const scan = (body: string, pieces: number[] = [], candidates = [known]) => {
        const bytes = Buffer.from(body);
        const scanner = new JsonShapeScanner(limits, { tools: () => candidates });
        let at = 0;
        for (const cut of [...pieces, bytes.length]) {
          scanner.push(bytes.subarray(at, cut));
          at = cut;
        }
        return { scanner };
      };
      const spanOf = (body: string) => {
        const plain = new JsonShapeScanner(limits);
        plain.push(Buffer.from(body));
        return plain.span('tools');
      };

      it('takes the span of bytes equal to a known array from it, and scans on after them', () => {
        const body = `{"input":"x","tools":${known.bytes},"after":{"a":1,"b":[1,2]}}`;
        const { scanner } = scan(body);
        expect(scanner.result).toBeNull();
        expect(scanner.knownArray('tools')).toBe(known);
        expect(scanner.span('tools')).toEqual(spanOf(body));
        // What follows the array is scanned from the right state: a wide object after it is refused.
        const wideAfter = scan(`{"tools":${known.bytes},"b":{"x":1,"y":2,"z":3,"w":4}}`).scanner;
        expect(wideAfter.result).toEqual({ kind: 'keys', limit: 3, count: 4, path: 'b' });
      });

      it("asks for the known arrays only when the field's array opens", () => {
        let asked = 0;
        const candidates = () => {
          asked++;
          return [known];
        };
        new JsonShapeScanner(limits, { tools: candidates }).push(Buffer.from('{"input":"x","other":[1,2],"nested":{"tools":[1]}}'));
        expect(asked).toBe(0);
        const scanner = new JsonShapeScanner(limits, { tools: candidates });
        scanner.push(Buffer.from(`{"input":"x","tools":${known.bytes}}`));
        expect(asked).toBe(1);
        expect(scanner.knownArray('tools')).toBe(known);
      });

      it('does not visit the bytes of a known array: it passed before', () => {
        // Five elements where three are allowed: scanned, refused; known, taken as it is.
        const five = { bytes: Buffer.from(JSON.stringify([1, 2, 3, 4, 5])), digest: 'five' };
        expect(scan(`{"tools":${five.bytes}}`, [], []).scanner.result).toMatchObject({ kind: 'items', limit: 3 });
        expect(scan(`{"tools":${five.bytes}}`, [], [five]).scanner.result).toBeNull();
      });

      it('scans bytes that differ from every known array, a known array cut by a chunk boundary, and one not at the top level', () => {
        const other = JSON.stringify(tools).replace('"b"', '"c"');
        const differs = scan(`{"tools":${other}}`).scanner;
        expect(differs.knownArray('tools')).toBeUndefined();
        expect(differs.span('tools')).toEqual(spanOf(`{"tools":${other}}`));
        const body = `{"tools":${known.bytes}}`;
        // Cut inside the array (a cut right before its bracket leaves it whole in the next chunk).
        for (const cut of [10, 30, body.length - 2]) {
          const cutOne = scan(body, [cut]).scanner;
          expect(cutOne.knownArray('tools')).toBeUndefined();
          expect(cutOne.span('tools')).toEqual(spanOf(body));
        }
        expect(scan(`{"x":{"tools":${known.bytes}}}`).scanner.knownArray('tools')).toBeUndefined();
      });

      it('keeps JSON semantics for a repeated `tools` key: the last array is the one known or not', () => {
        const other = '[{"type":"function","name":"z"}]';
        expect(scan(`{"tools":${known.bytes},"tools":${other}}`).scanner.knownArray('tools')).toBeUndefined();
        const lastKnown = scan(`{"tools":${other},"tools":${known.bytes}}`).scanner;
        expect(lastKnown.knownArray('tools')).toBe(known);
        expect(lastKnown.span('tools')).toEqual(spanOf(`{"tools":${other},"tools":${known.bytes}}`));
      });
    });

    it('stops at the first violation and ignores later chunks', () => {
      const scanner = new JsonShapeScanner({ keys: 1 });
      expect(scanner.push(Buffer.from('{"a":1,"b":'))).toMatchObject({ kind: 'keys', count: 2 });
      expect(scanner.push(Buffer.from('2}'))).toMatchObject({ kind: 'keys', count: 2 });
    });
  });
});
