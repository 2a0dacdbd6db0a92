import fc from 'fast-check';
import type { ToolSpec } from './conversation.js';
import { bestMatch, countTokens, fillerText, pythonJson, splitIntoDeltas } from './model-behaviour.js';

describe('splitIntoDeltas', () => {
  it('cuts the way the recorded gemma stream does', () => {
    expect(splitIntoDeltas('{"city": "San Francisco"}', 4)).toEqual(['{"', 'city', '": "', 'San', ' Fra', 'ncis', 'co"}']);
    expect(splitIntoDeltas('{"city": "San Francisco"}', 12)).toEqual(['{"city": "', 'San', ' Francisco"}']);
  });

  it('always concatenates back to the input, within the chunk size', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 1, max: 12 }), (text, size) => {
        const deltas = splitIntoDeltas(text, size);
        expect(deltas.join('')).toBe(text);
        // A single astral code point is two UTF-16 units and is never split.
        for (const d of deltas) expect(d.length).toBeLessThanOrEqual(Math.max(size, 2));
        expect(deltas.every((d) => d !== '')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('tokens', () => {
  it('counts whitespace-separated pieces, and filler has exactly the requested count', () => {
    expect(countTokens('  a bc\n d\t')).toBe(3);
    expect(countTokens('')).toBe(0);
    expect(countTokens(fillerText(1000))).toBe(1000);
    expect(splitIntoDeltas(fillerText(50), 4)).toHaveLength(50);
  });
});

describe('bestMatch', () => {
  const tools: ToolSpec[] = [
    { name: 'get_weather', description: 'Get current temperature and conditions for a city', parameters: undefined },
    { name: 'sendEmail', description: 'Send an email to one or more recipients', parameters: undefined },
    { name: 'search-web', description: 'Search the web and return the top results for a query', parameters: undefined },
  ];

  it('scores name words (split on _, - and camelCase) above description words', () => {
    expect(bestMatch(tools, 'What is the weather like in Paris?')).toMatchObject({ tool: { name: 'get_weather' }, score: 2 });
    expect(bestMatch(tools, 'Please send a note to Bob')?.tool.name).toBe('sendEmail');
    expect(bestMatch(tools, 'search for flights')?.tool.name).toBe('search-web');
    expect(bestMatch(tools, 'what temperatures today in the city')).toMatchObject({ tool: { name: 'get_weather' }, score: 2 });
  });

  it('ignores stop words and generic verbs', () => {
    expect(bestMatch(tools, 'Can you get me the one for this?')).toBeUndefined();
  });
});

describe('pythonJson', () => {
  it('spaces JSON the way vLLM tool parsers print it', () => {
    expect(pythonJson({ a: 1, b: [1, 'x', null], c: { d: true } })).toBe('{"a": 1, "b": [1, "x", null], "c": {"d": true}}');
    expect(JSON.parse(pythonJson({ q: 'quote " and \\ slash' }))).toEqual({ q: 'quote " and \\ slash' });
  });
});
