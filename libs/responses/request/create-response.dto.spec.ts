import { CreateResponseDto, ReasoningDto, toCreateResponseDto } from './create-response.dto.js';

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
