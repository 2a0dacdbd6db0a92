import { arraySpanAt, parseWithoutEchoedTools } from './echoed-tools.js';
import { loadVllmFixture } from './testing/upstream-test.helpers.js';

/** What the cut must give: the whole parse, with only the echo emptied. */
function withEmptyTools(value: any, path: string[]): any {
  const copy = structuredClone(value);
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path.at(-1)!] = [];
  return copy;
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
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pieces = ['tools', '"', '\\', '[', ']', '{', '}', ':', ',', 'x', ' ', 'é', '\u2028'];
    const text = (): string => Array.from({ length: Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
    const value = (depth: number): unknown => {
      const pick = random();
      if (depth > 3 || pick < 0.3) return text();
      if (pick < 0.45) return Math.floor(random() * 100);
      if (pick < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [random() < 0.3 ? 'tools' : text(), value(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const response: Record<string, unknown> = { id: `r${i}`, output: [value(1)], note: value(1) };
      if (random() < 0.8) response.tools = Array.from({ length: Math.floor(random() * 4) }, () => (random() < 0.7 ? { name: text(), schema: value(2) } : value(1)));
      const json = JSON.stringify(response);
      const whole = JSON.parse(json);
      // Cut when the compact form is there at all (the echo's or a nested list's) and the echo is an array.
      const expected = Array.isArray(whole.tools) && json.includes('"tools":[{') ? withEmptyTools(whole, ['tools']) : whole;
      expect(parseWithoutEchoedTools(json, 'response')).toEqual(expected);
    }
  });
});
