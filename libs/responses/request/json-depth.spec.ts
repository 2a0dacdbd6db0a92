import { MAX_JSON_DEPTH, exceedsJsonDepth } from './json-depth.js';

const nested = (depth: number, shape: 'array' | 'object'): unknown =>
  JSON.parse(shape === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

describe('exceedsJsonDepth', () => {
  it.each(['array', 'object'] as const)('allows exactly the limit and refuses one level more (%s)', (shape) => {
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH, shape))).toBe(false);
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1, shape))).toBe(true);
  });

  it('counts scalars as no depth and finds a deep branch beside shallow ones', () => {
    expect(exceedsJsonDepth('text')).toBe(false);
    expect(exceedsJsonDepth(null)).toBe(false);
    expect(exceedsJsonDepth({ a: 1, b: [1, 2, { c: 'x' }] }, 3)).toBe(false);
    expect(exceedsJsonDepth({ a: 1, b: [1, 2, { c: ['x'] }] }, 3)).toBe(true);
  });

  it('walks 100k levels without recursing (no stack overflow)', () => {
    expect(exceedsJsonDepth(nested(100_000, 'array'))).toBe(true);
  });
});
