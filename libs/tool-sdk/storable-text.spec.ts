import { assertStorableText, isStorableText, unstorableTextPath } from './storable-text.js';

describe('storable text', () => {
  it('accepts any well-formed text, emoji pairs included, and refuses NUL and unpaired surrogates', () => {
    for (const ok of ['', 'plain', 'résumé', '😀', '\ud83d\ude00x', '\\u0000 as six characters']) expect(isStorableText(ok)).toBe(true);
    for (const bad of ['a\u0000b', '\ud800', 'x\ud83d', '\ude00y', '\udc00\ud800']) expect(isStorableText(bad)).toBe(false);
  });

  it('names the first offending value or key by its path', () => {
    expect(unstorableTextPath({ model: 'm', input: [{ content: [{ text: 'ok' }, { text: 'a\u0000' }] }] })).toBe('input[0].content[1].text');
    expect(unstorableTextPath({ metadata: { 'k\u0000': 'v' } })).toBe('metadata.k\ufffd');
    expect(unstorableTextPath({ a: 1, b: [true, null, 'fine'] })).toBeNull();
    expect(unstorableTextPath('\ud800', 'after')).toBe('after');
    expect(() => assertStorableText({ instructions: '\u0000' })).toThrow(
      expect.objectContaining({ name: 'InvalidRequestError', param: 'instructions', code: 'unsupported_unicode' }),
    );
  });

  it('walks deep and wide values without recursion', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(unstorableTextPath(deep)).toMatch(/^(\[0\]){50000}$/);
    expect(unstorableTextPath({ big: 'x'.repeat(5_000_000) + '\udfff' })).toBe('big');
  });
});
