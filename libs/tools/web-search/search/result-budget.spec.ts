import type { SearchResult } from '../providers/search-provider.interface.js';
import { compactResults, truncateText } from './result-budget.js';

function results(n: number, snippetChars: number): SearchResult[] {
  return Array.from({ length: n }, (_, i) => ({
    title: `Result ${i + 1}`,
    url: `https://example.com/${i + 1}`,
    snippet: `word `
      .repeat(Math.ceil(snippetChars / 5))
      .slice(0, snippetChars)
      .trim(),
    ...(i === 0 ? { date: '2024-05-01' } : {}),
  }));
}

describe('compactResults', () => {
  it('gives the model title, url, snippet and date as JSON when everything fits', () => {
    const out = compactResults(['rust'], results(2, 40), 6000);
    expect(JSON.parse(out.text)).toEqual({
      query: 'rust',
      results: [
        { title: 'Result 1', url: 'https://example.com/1', snippet: results(1, 40)[0].snippet, date: '2024-05-01' },
        { title: 'Result 2', url: 'https://example.com/2', snippet: results(1, 40)[0].snippet },
      ],
    });
    expect(out.omitted).toBe(0);
  });

  it('caps long snippets even with budget to spare', () => {
    const out = compactResults(['q'], results(1, 5000), 100_000);
    const snippet = JSON.parse(out.text).results[0].snippet as string;
    expect(snippet.length).toBeLessThanOrEqual(600);
    expect(snippet.endsWith('…')).toBe(true);
  });

  it('shrinks snippets before dropping results', () => {
    const out = compactResults(['q'], results(5, 600), 2000);
    expect(out.text.length).toBeLessThanOrEqual(2000);
    const parsed = JSON.parse(out.text);
    expect(parsed.results).toHaveLength(5);
    for (const r of parsed.results) expect(r.snippet.length).toBeLessThan(600);
  });

  it('drops tail results once snippets are as short as they usefully get, and says how many', () => {
    const out = compactResults(['a', 'b'], results(40, 600), 1500);
    const parsed = JSON.parse(out.text);
    expect(out.text.length).toBeLessThanOrEqual(1500);
    expect(parsed.queries).toEqual(['a', 'b']);
    expect(parsed.results.length).toBeLessThan(40);
    expect(parsed.results.length + parsed.omitted_results).toBe(40);
    expect(out.shown.map((r) => r.url)).toEqual(parsed.results.map((r: SearchResult) => r.url));
    expect(parsed.results[0].url).toBe('https://example.com/1');
  });

  it('lists failed queries next to the results of the others', () => {
    const out = compactResults(['a', 'b'], results(1, 10), 6000, [{ query: 'b', message: 'brave failed (HTTP 500)' }]);
    expect(JSON.parse(out.text).failed_queries).toEqual([{ query: 'b', message: 'brave failed (HTTP 500)' }]);
  });
});

describe('truncateText', () => {
  it('cuts at a word boundary and marks the cut', () => {
    expect(truncateText('alpha beta gamma delta', 13)).toBe('alpha beta…');
    expect(truncateText('short', 10)).toBe('short');
  });
});
