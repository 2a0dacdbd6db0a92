import fc from 'fast-check';
import { assertStorableText, isStorableText, unstorableTextPath, utf8BytesAreStorable } from './storable-text.js';

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

describe('storable text, judged on the UTF-8 bytes of a JSON body', () => {
  const hex = (unit: number, upper: boolean) => unit.toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']();
  /** A JSON string literal for these UTF-16 units, each one escaped or written raw as the flags say. */
  const literal = (units: Array<{ unit: number; escape: boolean; upper: boolean }>) =>
    '"' +
    units
      .map(({ unit, escape, upper }) => {
        if (escape || unit < 0x20 || unit === 0x22) return `\\u${hex(unit, upper)}`;
        if (unit === 0x5c) return '\\\\';
        return String.fromCharCode(unit);
      })
      .join('') +
    '"';

  it('says "storable" only for bodies whose parsed strings are all storable, whatever the escapes', () => {
    const unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0, 0x5c, 0x75, 0x30, 0x64, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00, 0x41));
    const units = fc.array(fc.record({ unit, escape: fc.boolean(), upper: fc.boolean() }), { maxLength: 12 });
    let refused = 0;
    fc.assert(
      fc.property(fc.array(units, { minLength: 1, maxLength: 4 }), (strings) => {
        const bytes = Buffer.from(`{"k":[${strings.map(literal).join(',')}],${literal(strings[0])}:1}`);
        const parsed: unknown = JSON.parse(bytes.toString('utf8'));
        if (utf8BytesAreStorable(bytes)) expect(unstorableTextPath(parsed)).toBeNull();
        else refused++;
      }),
      { seed: 2029, numRuns: 3_000 },
    );
    // The property is not vacuous: the generator makes bodies the byte test sends to the walk.
    expect(refused).toBeGreaterThan(100);
  });

  it('passes plain and escaped-but-harmless bodies, and sends NUL and surrogate escapes to the walk', () => {
    for (const ok of ['{"a":"plain"}', '{"a":"résumé 😀"}', '{"a":"\\u00e9\\n\\"\\\\"}', '{"a":"\\\\u0000 is six characters"}', '{"a":"\\\\\\\\ud800"}'])
      expect(utf8BytesAreStorable(Buffer.from(ok))).toBe(true);
    for (const risky of ['{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"a":"\\uDFFF"}', '{"a":"\\ud83d\\ude00"}', '{"a":"\\\\\\u0000"}', '{"\\udc00":1}'])
      expect(utf8BytesAreStorable(Buffer.from(risky))).toBe(false);
  });
});
