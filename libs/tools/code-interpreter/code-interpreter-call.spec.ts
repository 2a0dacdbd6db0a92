import { type CodeInterpreterCallData, containerFileCitations } from './code-interpreter-call.js';

function callWith(n: number, containerId = 'cntr_a'): CodeInterpreterCallData {
  const files = Array.from({ length: n }, (_, i) => ({ fileId: `cfile_${i.toString(16).padStart(32, '0')}`, path: `/mnt/data/out/f${i}.txt` }));
  return { code: '', containerId, logs: '', images: [], files };
}

/** The answer a model gives after such a run: every file named once, by path. */
function answerNaming(call: CodeInterpreterCallData): string {
  return call.files.map((f) => `wrote ${f.path};`).join(' ');
}

describe('containerFileCitations', () => {
  it('cites every place the answer names a file, by path or id, in text order', () => {
    const call = callWith(3);
    const [a, b, c] = call.files;
    const text = `See ${b.path} and ${a.fileId}, then ${b.path} again; ${c.path}x and /mnt/data/out/f.txt are not ${'cfile_'}nope.`;
    const got = containerFileCitations(text, [call]);
    expect(got.map((x) => [x.file_id, text.slice(x.start_index as number, x.end_index as number)])).toEqual([
      [b.fileId, b.path],
      [a.fileId, a.fileId],
      [b.fileId, b.path],
      [c.fileId, c.path],
    ]);
    expect(got[0]).toEqual({ type: 'container_file_citation', container_id: 'cntr_a', file_id: b.fileId, filename: 'f1.txt', start_index: 4, end_index: 4 + b.path.length });
  });

  it('cites both of two names that start at the same place (a.csv and a.csv.bak)', () => {
    const call: CodeInterpreterCallData = {
      code: '',
      containerId: 'cntr_b',
      logs: '',
      images: [],
      files: [
        { fileId: 'cfile_1', path: '/mnt/data/a.csv' },
        { fileId: 'cfile_2', path: '/mnt/data/a.csv.bak' },
      ],
    };
    const got = containerFileCitations('kept /mnt/data/a.csv.bak', [call]);
    expect(got.map((x) => [x.file_id, x.end_index])).toEqual([
      ['cfile_1', 20],
      ['cfile_2', 24],
    ]);
  });

  it('cites every file of 10x and 100x as many, each where the answer names it, in text order', () => {
    for (const n of [100, 1_000, 10_000]) {
      const call = callWith(n);
      const text = answerNaming(call);
      const got = containerFileCitations(text, [call]);
      expect(got).toHaveLength(n);
      expect(got.every((x, i) => x.file_id === call.files[i].fileId && text.slice(x.start_index as number, x.end_index as number) === call.files[i].path)).toBe(true);
    }
  });
});
