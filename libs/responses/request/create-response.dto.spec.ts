import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { CreateResponseDto, ReasoningDto, plainCreateFields, toCreateResponseDto } from './create-response.dto.js';

describe('toCreateResponseDto', () => {
  it('picks every declared field, nested DTOs included, and nothing else', () => {
    const raw = JSON.parse('{"model":"m","generate":false,"store":true,"reasoning":{"effort":"low","constructor":"x"},"constructor":1,"__proto__":{"polluted":true},"unknown":2}');
    const dto = toCreateResponseDto(raw);
    expect(dto).toBeInstanceOf(CreateResponseDto);
    expect(dto.model).toBe('m');
    expect(dto.generate).toBe(false);
    expect(dto.store).toBe(true);
    expect(dto.reasoning).toBeInstanceOf(ReasoningDto);
    expect(dto.reasoning).toEqual(Object.assign(new ReasoningDto(), { effort: 'low' }));
    expect(
      Object.entries(dto)
        .filter(([, v]) => v !== undefined)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['generate', 'model', 'reasoning', 'store']);
    expect((dto as any).polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
  });
});

describe('plainCreateFields (the create route skips class-validator when it holds)', () => {
  const violations = (raw: Record<string, unknown>) => validateSync(toCreateResponseDto(raw), { forbidUnknownValues: false });

  it('holds for the fields most requests send, and not for a field with rules of its own or a wrong type', () => {
    expect(plainCreateFields({ model: 'm', input: 'hi', store: false, stream: true, tools: [], instructions: null, tool_choice: 'auto' })).toBe(true);
    expect(plainCreateFields({ model: 'm', temperature: 1 })).toBe(false);
    expect(plainCreateFields({ model: 'm', reasoning: { effort: 'low' } })).toBe(false);
    expect(plainCreateFields({ model: 'x'.repeat(257) })).toBe(false);
    expect(plainCreateFields({ model: 'm', store: 'yes' })).toBe(false);
    expect(plainCreateFields({ model: 'm', tools: {} })).toBe(false);
  });

  it('holds for a continuation and the bounded strings agents send, within their bounds only', () => {
    const bounded = { previous_response_id: 'resp_1', prompt_cache_key: 'k', safety_identifier: 's', user: 'u' };
    expect(plainCreateFields({ model: 'm', input: 'hi', store: true, ...bounded })).toBe(true);
    expect(plainCreateFields({ previous_response_id: 'x'.repeat(256) })).toBe(true);
    expect(plainCreateFields({ previous_response_id: 'x'.repeat(257) })).toBe(false);
    expect(plainCreateFields({ prompt_cache_key: 'x'.repeat(1025) })).toBe(false);
    expect(plainCreateFields({ previous_response_id: 42 })).toBe(false);
    expect(plainCreateFields({ user: ['u'] })).toBe(false);
    // Over the bound in UTF-16 units but not in class-validator's count: left to class-validator, which passes it.
    const pairs = { user: '\u{1F600}'.repeat(200) };
    expect(plainCreateFields(pairs)).toBe(false);
    expect(violations(pairs)).toEqual([]);
  });

  it('never holds for a body class-validator would refuse', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.boolean(),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
    );
    const key = fc.constantFrom(
      'model',
      'instructions',
      'tools',
      'store',
      'stream',
      'parallel_tool_calls',
      'background',
      'generate',
      'previous_response_id',
      'prompt_cache_key',
      'safety_identifier',
      'user',
      'temperature',
      'include',
      'input',
      'metadata',
    );
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), (raw) => {
        if (plainCreateFields(raw)) expect(violations(raw)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});
