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
