import { newId } from './ids.js';

describe('newId', () => {
  it('is the prefix, 12 hex digits of the time it was made, and 24 of random', () => {
    const before = Date.now();
    const id = newId('resp');
    const after = Date.now();
    expect(id).toMatch(/^resp_[0-9a-f]{36}$/);
    const made = parseInt(id.slice(5, 17), 16);
    expect(made).toBeGreaterThanOrEqual(before);
    expect(made).toBeLessThanOrEqual(after);
  });

  it('sorts ids of later milliseconds after earlier ones, as text', async () => {
    const earlier = Array.from({ length: 50 }, () => newId('msg'));
    await new Promise((r) => setTimeout(r, 5));
    const later = Array.from({ length: 50 }, () => newId('msg'));
    for (const a of earlier) for (const b of later) expect(a < b).toBe(true);
  });

  it('never repeats, and its random part differs within one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('fc'));
    expect(new Set(ids).size).toBe(ids.length);
    const sameMs = ids.filter((id) => id.slice(3, 15) === ids[0].slice(3, 15));
    expect(new Set(sameMs.map((id) => id.slice(15))).size).toBe(sameMs.length);
  });
});
