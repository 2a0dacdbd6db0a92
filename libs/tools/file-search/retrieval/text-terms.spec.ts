import { stemmer } from 'stemmer';
import { textTerms } from './text-terms.js';

describe('the shared analyzer', () => {
  it("gives the ingestion thread's index line the same terms and counts, in order of first occurrence", async () => {
    const { termCounts, termCountsLine } = await textTerms();
    const text = 'The parser reads files; parsing files is what parsers do. Ünïcode wörds, 42 and 42 again.';
    const { length, counts } = termCounts(text);
    expect(counts.slice(0, 3)).toEqual([
      ['parser', 2],
      ['read', 1],
      ['file', 2],
    ]);
    expect(termCountsLine(text)).toBe([String(length), ...counts.map(([term, n]) => `${term} ${n}`)].join(' '));
    expect(termCountsLine('the and of')).toBe('0');
  });

  it('stems every word as the stemmer does, past the number of stems it remembers', async () => {
    const { termCounts } = await textTerms();
    // 60 000 distinct words (more than are remembered), then words seen before and new ones.
    const words = Array.from({ length: 60_000 }, (_, i) => `walking${i.toString(36)}ness`);
    const text = [...words, 'connections', 'connected', ...words.slice(0, 10)].join(' ');
    const { length, counts } = termCounts(text);
    expect(length).toBe(60_012);
    const expected = new Map<string, number>();
    for (const w of text.split(' ')) expected.set(stemmer(w), (expected.get(stemmer(w)) ?? 0) + 1);
    expect(new Map(counts)).toEqual(expected);
    expect(new Map(counts).get('connect')).toBe(2);
  });
});
