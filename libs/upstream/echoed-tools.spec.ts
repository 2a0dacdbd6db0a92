import { EchoedToolsCutter, arraySpanAt, parseBytesWithoutEchoedTools, parseWithoutEchoedTools } from './echoed-tools.js';
import { loadVllmFixture } from './testing/upstream-test.helpers.js';

/** What the cut must give: the whole parse, with only the echo emptied. */
function withEmptyTools(value: any, path: string[]): any {
  const copy = structuredClone(value);
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path.at(-1)!] = [];
  return copy;
}

/**
 * Random response objects (seeded): strings full of JSON's own characters, nested values, `tools`
 * keys at any depth and, mostly, an echo of a few declarations; each with its JSON text.
 */
function randomResponses(count: number, seed: number, pieces: readonly string[]): Array<{ response: Record<string, unknown>; json: string }> {
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const text = (): string => Array.from({ length: Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
  const value = (depth: number): unknown => {
    const pick = random();
    if (depth > 3 || pick < 0.3) return text();
    if (pick < 0.45) return Math.floor(random() * 100);
    if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [random() < 0.3 ? 'tools' : text(), value(depth + 1)]));
  };
  return Array.from({ length: count }, (_, i) => {
    const response: Record<string, unknown> = { id: `r${i}`, output: [value(1)], note: value(1) };
    if (random() < 0.8) response.tools = Array.from({ length: Math.floor(random() * 4) }, () => (random() < 0.7 ? { name: text(), schema: value(2) } : value(1)));
    return { response, json: JSON.stringify(response) };
  });
}

describe('parseWithoutEchoedTools', () => {
  it("empties a recorded vLLM response's echo of eight declared tools and keeps every other field", () => {
    const body = loadVllmFixture('tool-call-required-Qwen-Qwen3-30B-A3B-FP8-nonstreaming.yaml').turns[0].response.body;
    expect(body.tools).toHaveLength(8);
    const text = JSON.stringify(body);
    expect(parseWithoutEchoedTools(text, 'response')).toEqual(withEmptyTools(body, ['tools']));
  });

  it("empties a streamed event's `response.tools`, and leaves an output item's own `tools` (an MCP listing) whole", () => {
    const listing = { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools: [{ name: 'add', input_schema: {} }] };
    const completed = { type: 'response.completed', response: { id: 'r', output: [listing], tools: [{ type: 'function', name: 'f' }], status: 'completed' } };
    expect(parseWithoutEchoedTools(JSON.stringify(completed), 'event')).toEqual(withEmptyTools(completed, ['response', 'tools']));
    const done = { type: 'response.output_item.done', output_index: 0, item: listing };
    expect(parseWithoutEchoedTools(JSON.stringify(done), 'event')).toEqual(done);
    // A response object's listing item, before its own `tools`: only the top-level echo goes.
    const response = { id: 'r', output: [listing], tools: [{ type: 'function', name: 'f' }] };
    expect(parseWithoutEchoedTools(JSON.stringify(response), 'response')).toEqual(withEmptyTools(response, ['tools']));
  });

  it('is not misled by `"tools":[` inside strings, by escaped quotes and backslashes, or by keys that only end in tools', () => {
    const tricky = {
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'say "tools":[1,2] and \\"tools\\":[3] \\\\' }] }],
      'a"tools': [1],
      'tools\\': [2],
      metadata: { tools: ['nested'] },
      tools: [{ name: 'x', description: 'ends with a backslash \\', parameters: { enum: ['"]', '[{'] } }],
      after: 'kept',
    };
    const text = JSON.stringify(tricky);
    expect(parseWithoutEchoedTools(text, 'response')).toEqual(withEmptyTools(tricky, ['tools']));
  });

  it('finds the array in JSON written with whitespace between tokens, which is then parsed whole', () => {
    const value = { id: 'r', output: [], tools: [{ name: 'a' }, { name: 'b' }], usage: { input_tokens: 3 } };
    const text = JSON.stringify(value, null, 2);
    const span = arraySpanAt(text, ['tools'])!;
    expect(JSON.parse(text.slice(span.start, span.end))).toEqual(value.tools);
    // Only vLLM's compact form is looked for: the rest costs one search and a whole parse.
    expect(parseWithoutEchoedTools(text, 'response')).toEqual(value);
  });

  it('parses text without an echo, or with one that is not an array, unchanged', () => {
    for (const value of [{ id: 'r', output: [] }, { id: 'r', tools: null }, { id: 'r', tools: 'none' }, { id: 'r', tools: {} }, { delta: 'tools' }]) {
      expect(parseWithoutEchoedTools(JSON.stringify(value), 'response')).toEqual(value);
      expect(parseWithoutEchoedTools(JSON.stringify(value), 'event')).toEqual(value);
    }
  });

  it('leaves malformed JSON for JSON.parse to refuse, as before', () => {
    for (const text of ['{"tools":[{"a":1}', '{"tools":[{"a":"1]}', '{"tools":[1}]', '{"tools":', '"tools":[]', '{"tools":[]}}']) {
      expect(() => parseWithoutEchoedTools(text, 'response')).toThrow(SyntaxError);
    }
  });

  it('agrees with a whole parse on random response objects', () => {
    for (const { json } of randomResponses(500, 7, ['tools', '"', '\\', '[', ']', '{', '}', ':', ',', 'x', ' ', 'é', '\u2028'])) {
      const whole = JSON.parse(json);
      // Cut when the compact form is there at all (the echo's or a nested list's) and the echo is an array.
      const expected = Array.isArray(whole.tools) && json.includes('"tools":[{') ? withEmptyTools(whole, ['tools']) : whole;
      expect(parseWithoutEchoedTools(json, 'response')).toEqual(expected);
    }
  });

  describe('with the echoes it cut before', () => {
    const declared = (names: string[]) =>
      names.map((name) => ({ type: 'function', name, description: `looks ${name} up`, parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: null }));
    const answer = (tools: unknown[], output: unknown[] = [{ type: 'message', content: [{ type: 'output_text', text: 'ok' }] }]) => ({ id: 'resp_1', output, tools, top_p: 1 });

    it("takes a repeated echo's extent from the kept one, and gives what the scan gives", () => {
      const cutter = new EchoedToolsCutter();
      const tools = declared(['a', 'b', 'c']);
      for (const round of [0, 1, 2]) {
        const body = answer(tools, [{ type: 'message', content: [{ type: 'output_text', text: `round ${round} "tools":[{"x":1}]` }] }]);
        expect(cutter.parse(JSON.stringify(body), 'response')).toEqual(withEmptyTools(body, ['tools']));
      }
      // The first answer was scanned; the two after it matched the kept echo.
      expect(cutter.knownCuts).toBe(2);
      // Three times per stream: each streamed event carrying the response matches too.
      const created = { type: 'response.created', response: answer(tools, []) };
      expect(cutter.parse(JSON.stringify(created), 'event')).toEqual(withEmptyTools(created, ['response', 'tools']));
      expect(cutter.knownCuts).toBe(3);
    });

    it('scans an echo that only begins like a kept one, and finds its own end', () => {
      const cutter = new EchoedToolsCutter();
      cutter.parse(JSON.stringify(answer(declared(['a', 'b']))), 'response');
      // One more tool after the kept two, and the same two with a different last character.
      const longer = answer(declared(['a', 'b', 'c']));
      expect(cutter.parse(JSON.stringify(longer), 'response')).toEqual(withEmptyTools(longer, ['tools']));
      const changed = answer([...declared(['a']), { ...declared(['b'])[0], strict: true }]);
      expect(cutter.parse(JSON.stringify(changed), 'response')).toEqual(withEmptyTools(changed, ['tools']));
      expect(cutter.knownCuts).toBe(0);
    });

    it("leaves an MCP listing whole even when its `tools` are a kept echo's characters", () => {
      const cutter = new EchoedToolsCutter();
      const tools = declared(['a']);
      cutter.parse(JSON.stringify(answer(tools)), 'response');
      const listing = { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools };
      const body = answer(declared(['z']), [listing]);
      const parsed = cutter.parse(JSON.stringify(body), 'response') as { output: Array<{ tools: unknown[] }>; tools: unknown[] };
      expect(parsed.output[0].tools).toEqual(tools);
      expect(parsed).toEqual(withEmptyTools(body, ['tools']));
    });

    it('agrees with a whole parse over many lists, repeated and new, past the number it keeps', () => {
      const cutter = new EchoedToolsCutter();
      let seed = 11;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const lists = Array.from({ length: 20 }, (_, i) => declared(Array.from({ length: 1 + (i % 5) }, (_, j) => `t${i}_${j}${'"\\['.charAt(j % 4)}`)));
      for (let i = 0; i < 400; i++) {
        // Mostly a few lists an agent repeats, now and then another one.
        const tools = lists[random() < 0.8 ? Math.floor(random() * 3) : Math.floor(random() * lists.length)];
        const body = answer(tools, random() < 0.2 ? [{ type: 'mcp_list_tools', tools }] : [{ type: 'message', text: `m${i}` }]);
        expect(cutter.parse(JSON.stringify(body), 'response')).toEqual(withEmptyTools(body, ['tools']));
      }
      expect(cutter.knownCuts).toBeGreaterThan(300);
    });
  });
});

describe('parseBytesWithoutEchoedTools: a response object still in bytes', () => {
  const declared = (names: string[]) => names.map((name) => ({ type: 'function', name, description: `finds ${name} — vite`, parameters: { type: 'object' } }));
  const answer = (tools: unknown[], output: unknown[] = [{ type: 'message', content: [{ type: 'output_text', text: 'ok é \u2028 "tools":[{' }] }]) => ({
    id: 'resp_1',
    output,
    tools,
    top_p: 1,
  });
  const bytesOf = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

  it("empties a recorded vLLM response's echo as the text reader does", () => {
    const body = loadVllmFixture('tool-call-required-Qwen-Qwen3-30B-A3B-FP8-nonstreaming.yaml').turns[0].response.body;
    expect(parseBytesWithoutEchoedTools(bytesOf(body))).toEqual(withEmptyTools(body, ['tools']));
  });

  it('agrees with the text reader and a whole parse on random response objects, multi-byte characters included', () => {
    const bytesReader = new EchoedToolsCutter();
    for (const { json } of randomResponses(500, 17, ['tools', '"', '\\', '[', ']', '{', '}', ':', ',', 'x', ' ', 'é', '\u2028', '😀'])) {
      expect(bytesReader.parseBytes(Buffer.from(json, 'utf8'))).toEqual(parseWithoutEchoedTools(json, 'response'));
    }
  });

  it('leaves malformed JSON for JSON.parse to refuse', () => {
    for (const text of ['{"tools":[{"a":1}', '{"tools":[{"a":"1]}', '{"tools":[1}]', '{"tools":', '"tools":[]', '{"tools":[]}}']) {
      expect(() => parseBytesWithoutEchoedTools(Buffer.from(text))).toThrow(SyntaxError);
    }
  });

  it('takes a repeated echo from the kept one, whichever reader kept it, and never decodes the echo again', () => {
    const cutter = new EchoedToolsCutter();
    const tools = declared(['a', 'b', 'c']);
    // Kept by the text reader (a streamed answer), matched in bytes, and the other way round.
    cutter.parse(JSON.stringify(answer(tools)), 'response');
    const body = answer(tools);
    const bytes = bytesOf(body);
    const decoded: Array<[number, number]> = [];
    const toString = Buffer.prototype.toString;
    Buffer.prototype.toString = function (this: Buffer, ...args: any[]) {
      const [, start = 0, end = this.length] = args as [string?, number?, number?];
      if (this === bytes) decoded.push([start, end]);
      return toString.apply(this, args as any);
    } as typeof toString;
    try {
      expect(cutter.parseBytes(bytes)).toEqual(withEmptyTools(body, ['tools']));
    } finally {
      Buffer.prototype.toString = toString;
    }
    expect(cutter.knownCuts).toBe(1);
    // Only the text around the echo (and the keys on its path) was decoded; none of the echo's bytes.
    const echoStart = bytes.lastIndexOf('"tools":[{') + '"tools":'.length;
    const echoEnd = echoStart + Buffer.byteLength(JSON.stringify(tools));
    expect(decoded.length).toBeGreaterThan(0);
    expect(decoded.filter(([start, end]) => start < echoEnd && end > echoStart)).toEqual([]);
    expect(decoded.reduce((sum, [start, end]) => sum + end - start, 0)).toBeLessThan(bytes.length - (echoEnd - echoStart) + 32);

    const other = declared(['x', 'y']);
    cutter.parseBytes(bytesOf(answer(other)));
    expect(cutter.knownCuts).toBe(1);
    const streamed = { type: 'response.completed', response: answer(other, []) };
    expect(cutter.parse(JSON.stringify(streamed), 'event')).toEqual(withEmptyTools(streamed, ['response', 'tools']));
    expect(cutter.knownCuts).toBe(2);
  });

  it("scans an echo that only begins like a kept one, and leaves an MCP listing's own tools whole", () => {
    const cutter = new EchoedToolsCutter();
    cutter.parseBytes(bytesOf(answer(declared(['a', 'b']))));
    const longer = answer(declared(['a', 'b', 'c']));
    expect(cutter.parseBytes(bytesOf(longer))).toEqual(withEmptyTools(longer, ['tools']));
    expect(cutter.knownCuts).toBe(0);
    const tools = declared(['a', 'b', 'c']);
    const listing = answer(declared(['z']), [{ type: 'mcp_list_tools', id: 'mcpl_1', server_label: 's', tools }]);
    const parsed = cutter.parseBytes(bytesOf(listing)) as { output: Array<{ tools: unknown[] }> };
    expect(parsed.output[0].tools).toEqual(tools);
    expect(parsed).toEqual(withEmptyTools(listing, ['tools']));
  });
});
