import { StreamLines } from './stream-lines.js';

/** What a consumer sees of `text` cut at `cuts`: whole lines, raw text of over-long ones, and the held end. */
const read = (text: string, cuts: number[], maxCarry = 64) => {
  const lines = new StreamLines(maxCarry);
  const seen: string[] = [];
  let from = 0;
  for (const at of [...cuts, text.length]) {
    lines.push(
      text.slice(from, at),
      (line) => seen.push(`line:${line}`),
      (raw) => seen.push(`raw:${raw}`),
    );
    from = at;
  }
  return { seen, end: lines.end() };
};

describe('StreamLines', () => {
  const stream = 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]';

  it('gives the same whole lines and the same unfinished end wherever the chunks are cut', () => {
    const whole = read(stream, []);
    expect(whole).toEqual({ seen: ['line:data: {"a":1}', 'line:', 'line:data: {"b":2}', 'line:'], end: 'data: [DONE]' });
    for (let i = 0; i <= stream.length; i++) for (const j of [i, Math.min(stream.length, i + 3)]) expect(read(stream, [i, j])).toEqual(whole);
  });

  it('passes a line longer than it may hold as raw text up to its newline, then reads lines again', () => {
    const long = `data: ${'x'.repeat(100)}`;
    const { seen, end } = read(`${long}\ndata: next\n`, [40, 70, 90]);
    expect(
      seen
        .filter((s) => s.startsWith('raw:'))
        .map((s) => s.slice(4))
        .join(''),
    ).toBe(`${long}\n`);
    expect(seen.filter((s) => s.startsWith('line:'))).toEqual(['line:data: next']);
    expect(end).toBe('');
  });
});
