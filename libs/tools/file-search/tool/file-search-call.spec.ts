import { findCitations, parseQueries, resultsForModel } from './file-search-call.js';

describe('file_search call arguments, results and citations', () => {
  it('reads queries from {queries} or a lone {query}, deduplicated, bounded', () => {
    expect(parseQueries('{"queries": ["a", " a ", "b"]}', 5)).toEqual({ queries: ['a', 'b'] });
    expect(parseQueries('{"query": "only"}', 5)).toEqual({ queries: ['only'] });
    expect(parseQueries('{"queries": []}', 5)).toHaveProperty('error');
    expect(parseQueries('not json', 5)).toHaveProperty('error');
    expect((parseQueries(JSON.stringify({ queries: ['1', '2', '3'] }), 2) as { error: string }).error).toContain('At most 2');
  });

  it('labels results for the model and drops whole results past the budget', () => {
    const results = [1, 2, 3].map((i) => ({ file_id: `file-${i}`, filename: `f${i}.txt`, score: 1 / i, text: 'x'.repeat(100), attributes: {} }));
    const text = resultsForModel(['q'], results, 330);
    expect(text).toContain('[1] file_id=file-1 filename="f1.txt" score=1.000');
    expect(text).toContain('[2] file_id=file-2');
    expect(text).not.toContain('file-3');
    expect(resultsForModel(['q'], [], 100)).toBe('No results in the attached files for "q".');
  });

  it('cites each mention of a file by id or filename, in text order, without overlaps', () => {
    const files = new Map([
      ['file-a', 'report.pdf'],
      ['file-b', 'report.pdf.bak'],
    ]);
    const text = 'See report.pdf.bak and report.pdf; also file-a.';
    expect(findCitations(text, files)).toEqual([
      { type: 'file_citation', file_id: 'file-b', filename: 'report.pdf.bak', index: 4 },
      { type: 'file_citation', file_id: 'file-a', filename: 'report.pdf', index: 23 },
      { type: 'file_citation', file_id: 'file-a', filename: 'report.pdf', index: 40 },
    ]);
    expect(findCitations('nothing cited here', files)).toEqual([]);
  });

  it('bounds the citations of a text that repeats a name without end', () => {
    const text = 'a.md '.repeat(10_000);
    expect(findCitations(text, new Map([['file-1', 'a.md']]))).toHaveLength(100);
  });
});
