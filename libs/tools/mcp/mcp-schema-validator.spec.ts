import { loadMcpSdk } from './mcp-sdk.js';
import { CompiledSchemaCache } from './mcp-schema-validator.js';

describe('CompiledSchemaCache', () => {
  // In the gateway the pool has loaded the SDK before any client asks the cache for a validator.
  beforeAll(() => loadMcpSdk());

  const sum = () => ({ type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] }) as const;

  it('compiles a schema once however often the same text comes back, and still validates', () => {
    const cache = new CompiledSchemaCache();
    // Each listing parses a new object: identity differs, text does not.
    const first = cache.getValidator(sum());
    const again = cache.getValidator(sum());
    expect(again).toBe(first);
    expect(cache.size).toBe(1);
    expect(first({ sum: 3 })).toEqual({ valid: true, data: { sum: 3 }, errorMessage: undefined });
    expect(first({ sum: 'three' })).toMatchObject({ valid: false, errorMessage: expect.stringMatching(/number/) });
  });

  it('keeps a changed schema apart from the one it replaces', () => {
    const cache = new CompiledSchemaCache();
    const number = cache.getValidator(sum());
    const text = cache.getValidator({ type: 'object', properties: { sum: { type: 'string' } }, required: ['sum'] });
    expect(text).not.toBe(number);
    expect(text({ sum: 'three' }).valid).toBe(true);
    expect(number({ sum: 'three' }).valid).toBe(false);
  });

  it('resolves a $id as the SDK does: within its own cache only', () => {
    const a = new CompiledSchemaCache();
    const b = new CompiledSchemaCache();
    const numberWithId = { $id: 'https://schemas.example/result.json', type: 'object', properties: { v: { type: 'number' } } } as const;
    const stringWithId = { $id: 'https://schemas.example/result.json', type: 'object', properties: { v: { type: 'string' } } } as const;
    expect(a.getValidator(numberWithId)({ v: 1 }).valid).toBe(true);
    // Another connection (owner, server) using the same $id gets its own schema.
    expect(b.getValidator(stringWithId)({ v: 'x' }).valid).toBe(true);
    expect(b.getValidator(stringWithId)({ v: 1 }).valid).toBe(false);
  });

  it('starts over past its bound instead of growing', () => {
    const cache = new CompiledSchemaCache(3);
    for (let i = 0; i < 3; i++) cache.getValidator({ type: 'object', properties: { [`f${i}`]: { type: 'number' } } });
    expect(cache.size).toBe(3);
    const fourth = cache.getValidator({ type: 'object', properties: { f3: { type: 'number' } }, required: ['f3'] });
    expect(cache.size).toBe(1);
    expect(fourth({}).valid).toBe(false);
    expect(fourth({ f3: 1 }).valid).toBe(true);
  });

  it('finds a frozen schema by identity, without serializing it again, and forgets it when it starts over', () => {
    const cache = new CompiledSchemaCache(2);
    const kept = Object.freeze(sum());
    const first = cache.getValidator(kept);
    const stringify = JSON.stringify;
    let serialized = 0;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      serialized++;
      return stringify(...args);
    }) as typeof JSON.stringify;
    try {
      expect(cache.getValidator(kept)).toBe(first);
      expect(serialized).toBe(0);
      // An unfrozen object with the same text still finds it by text.
      expect(cache.getValidator(sum())).toBe(first);
      expect(serialized).toBe(1);
    } finally {
      JSON.stringify = stringify;
    }
    cache.getValidator({ type: 'string' });
    cache.getValidator({ type: 'number' });
    // Started over past its bound: the frozen schema is compiled afresh, not served from before.
    const again = cache.getValidator(kept);
    expect(again).not.toBe(first);
    expect(again({ sum: 1 }).valid).toBe(true);
  });
});
