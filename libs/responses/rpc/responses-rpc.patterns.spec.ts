import { RESPONSES_PATTERNS, responsesPatterns, servedPatterns } from './responses-rpc.patterns.js';

describe('the served patterns', () => {
  it("come from the module's prefix or the config's, unprefixed when neither is set", () => {
    expect(servedPatterns(undefined, undefined)).toEqual(RESPONSES_PATTERNS);
    expect(servedPatterns('', '')).toEqual(RESPONSES_PATTERNS);
    expect(servedPatterns('tenant-a', undefined).create).toBe('tenant-a.responses.create');
    expect(servedPatterns(undefined, 'tenant-a').cancel).toBe('tenant-a.responses.cancel');
  });

  it('accept the same prefix in both places, spelled with or without its separator', () => {
    expect(servedPatterns('tenant-a', 'tenant-a.')).toEqual(responsesPatterns('tenant-a'));
  });

  it('refuse two different prefixes, naming both', () => {
    expect(() => servedPatterns('tenant-a', 'tenant-b')).toThrow(/forRoot\({ prefix: 'tenant-a' }\) and transports.patternPrefix .* 'tenant-b' differ/);
  });
});
