import fc from 'fast-check';
import { chunksLength, freezeJson, frozenForms, jsonChunks, mapFrozenOnce, rememberJson, stringifyJson } from './frozen-json.js';

/** The bytes `jsonChunks` gives, joined. */
const jsonBytes = (value: unknown): Buffer => Buffer.concat(jsonChunks(value));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('stringifyJson', () => {
  it('splices a remembered value in, at the top level and one object down', () => {
    const tools = deepFreeze([{ type: 'function', name: 'a' }]);
    rememberJson(tools, '["spliced"]');
    expect(stringifyJson({ id: 'r', tools })).toBe('{"id":"r","tools":["spliced"]}');
    expect(stringifyJson({ type: 'response.created', response: { id: 'r', tools } })).toBe('{"type":"response.created","response":{"id":"r","tools":["spliced"]}}');
    // Deeper than asked: serialized as usual.
    expect(stringifyJson({ a: { b: { tools } } })).toBe('{"a":{"b":{"tools":[{"type":"function","name":"a"}]}}}');
  });

  it('ignores a value that is not frozen: its text could go stale', () => {
    const tools = [{ name: 'a' }];
    rememberJson(tools, '["stale"]');
    tools[0].name = 'b';
    expect(stringifyJson({ tools })).toBe('{"tools":[{"name":"b"}]}');
  });

  it('gives what JSON.stringify gives, as text and as bytes (jsonChunks), for any JSON-like body carrying remembered values', () => {
    const member = fc.oneof(
      fc.jsonValue(),
      fc.constant(undefined),
      fc.constant(() => 1),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), member), fc.dictionary(fc.string(), member), fc.jsonValue(), fc.string(), (outer, inner, shared, key) => {
        const frozen = deepFreeze(structuredClone({ shared }));
        rememberJson(frozen);
        const body = { ...outer, [key]: frozen, nested: { ...inner, frozen } };
        expect(stringifyJson(body)).toBe(JSON.stringify(body));
        expect(jsonBytes(body).equals(Buffer.from(JSON.stringify(body)))).toBe(true);
      }),
    );
  });
});

describe('stringifyJson where a copy with placeholders cannot stand in', () => {
  it('writes a body whose remembered value sits under an own `__proto__` key, or inside an object with `toJSON`, as JSON.stringify does', () => {
    const tools = deepFreeze([{ type: 'function', name: 'a' }]);
    rememberJson(tools, '["spliced"]');
    const odd = JSON.parse('{"id":"r","__proto__":null}') as Record<string, unknown>;
    Object.defineProperty(odd, '__proto__', { value: tools, enumerable: true });
    expect(stringifyJson(odd)).toBe('{"id":"r","__proto__":["spliced"]}');
    const custom = { id: 'r', inner: { tools, toJSON: () => 'custom' }, tools };
    expect(stringifyJson(custom)).toBe('{"id":"r","inner":"custom","tools":["spliced"]}');
    expect(jsonBytes(custom).toString('utf8')).toBe('{"id":"r","inner":"custom","tools":["spliced"]}');
  });
});

describe('jsonChunks', () => {
  it('gives the UTF-8 bytes of what stringifyJson gives, remembered texts as their kept bytes, at any depth it splices', () => {
    const tools = deepFreeze([{ type: 'function', name: 'météo', description: '天気 ☀️' }]);
    rememberJson(tools);
    for (const body of [{ id: 'r', tools }, { type: 'response.created', response: { id: 'r', tools, note: 'ü' } }, { tools, empty: {}, after: [1] }, { a: 'plain' }]) {
      expect(jsonBytes(body).toString('utf8')).toBe(JSON.stringify(body));
      expect(jsonBytes(body).toString('utf8')).toBe(stringifyJson(body));
    }
    // The kept bytes are a chunk of their own, the same buffer on every write; a body without kept texts is one chunk.
    const [, first] = jsonChunks({ tools });
    const [, second] = jsonChunks({ tools, after: 1 });
    expect(second).toBe(first);
    expect(first.toString('utf8')).toBe(JSON.stringify(tools));
    expect(jsonChunks({ a: 'plain' })).toHaveLength(1);
    expect(chunksLength(jsonChunks({ id: 'r', tools }))).toBe(Buffer.byteLength(JSON.stringify({ id: 'r', tools })));
  });
});

describe('mapFrozenOnce', () => {
  it('maps a frozen list once, into a frozen list whose text is spliced; a list that is not frozen every time', () => {
    const forms = frozenForms<{ n: number }, { m: number }>();
    let mapped = 0;
    const double = (item: { n: number }) => (mapped++, { m: item.n * 2 });
    const kept = freezeJson([{ n: 1 }, { n: 2 }]);
    const first = mapFrozenOnce(forms, kept, double);
    expect(mapFrozenOnce(forms, kept, double)).toBe(first);
    expect(mapped).toBe(2);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(stringifyJson({ tools: first })).toBe('{"tools":[{"m":2},{"m":4}]}');
    const open = [{ n: 3 }];
    expect(mapFrozenOnce(forms, open, double)).not.toBe(mapFrozenOnce(forms, open, double));
    expect(mapped).toBe(4);
  });

  it('maps each frozen item of a list that is not frozen once, into a frozen item whose text is spliced; its other items every time', () => {
    const forms = frozenForms<{ n: number }, { m: number }>();
    let mapped = 0;
    const double = (item: { n: number }) => (mapped++, { m: item.n * 2 });
    const kept = freezeJson({ n: 1 });
    const open = { n: 2 };
    const first = mapFrozenOnce(forms, [kept, open], double);
    const second = mapFrozenOnce(forms, [open, kept], double);
    expect(second[1]).toBe(first[0]);
    expect(second[0]).not.toBe(first[1]);
    expect(mapped).toBe(3);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(Object.isFrozen(first)).toBe(false);
    const [, kept0] = jsonChunks({ tools: first });
    expect(kept0.toString('utf8')).toBe('{"m":2}');
    expect(stringifyJson({ tools: second })).toBe('{"tools":[{"m":4},{"m":2}]}');
  });
});

describe('remembered values inside arrays', () => {
  const listed = freezeJson([{ name: 'a', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }]);
  rememberJson(listed);
  const fn = freezeJson({ type: 'function', name: 'a', parameters: { type: 'object' } });
  rememberJson(fn);

  it('splices an array element and a member of an element, down to the depth asked', () => {
    const body = { model: 'm', input: [{ role: 'user', content: 'hi' }], tools: [fn, { type: 'function', name: 'b' }] };
    expect(jsonChunks(body)).toHaveLength(3);
    expect(stringifyJson(body)).toBe(JSON.stringify(body));
    const answer = {
      id: 'r',
      output: [
        { type: 'listing', tools: listed },
        { type: 'message', content: [{ text: 'x' }] },
      ],
    };
    expect(jsonChunks(answer, 3)).toHaveLength(3);
    expect(jsonChunks(answer, 2)).toHaveLength(1);
    expect(Buffer.concat(jsonChunks(answer, 3)).toString('utf8')).toBe(JSON.stringify(answer));
    const event = { type: 'response.completed', response: answer };
    expect(jsonChunks(event, 4)).toHaveLength(3);
    expect(stringifyJson(event, 4)).toBe(JSON.stringify(event));
    expect(stringifyJson([fn, 1, listed], 1)).toBe(JSON.stringify([fn, 1, listed]));
  });

  it('writes arrays member by member, as JSON.stringify does, when a copy with placeholders cannot stand in', () => {
    // An own `__proto__` key holding a remembered value sends the whole body member by member.
    const odd = JSON.parse('{"id":"l"}') as Record<string, unknown>;
    Object.defineProperty(odd, '__proto__', { value: listed, enumerable: true });
    const sparse: unknown[] = [fn];
    sparse[3] = () => 1;
    const body = { output: [odd, sparse, undefined, 1, { tools: listed, note: undefined }], tools: [fn] };
    const expected = JSON.stringify(body);
    expect(expected).toContain(`"id":"l","__proto__":${JSON.stringify(listed)}`);
    expect(stringifyJson(body, 3)).toBe(expected);
    const chunks = jsonChunks(body, 3);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(expected);
    // Each remembered value is still a chunk of its own: the listing twice and the function twice.
    expect(chunks).toHaveLength(9);
  });

  it('gives what JSON.stringify gives for any JSON-like arrays holding remembered values', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.jsonValue(), fc.constant(undefined))), fc.array(fc.jsonValue()), fc.nat(3), (outer, inner, at) => {
        const frozen = deepFreeze(structuredClone({ inner }));
        rememberJson(frozen);
        const items = [...outer];
        items.splice(Math.min(at, items.length), 0, frozen, { tools: [frozen, ...inner] });
        const body = { output: items, tools: [frozen] };
        for (const depth of [1, 2, 3, 4]) {
          expect(stringifyJson(body, depth)).toBe(JSON.stringify(body));
          expect(Buffer.concat(jsonChunks(body, depth)).equals(Buffer.from(JSON.stringify(body)))).toBe(true);
        }
      }),
    );
  });
});
