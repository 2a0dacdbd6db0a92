import { matchesFilter, parseAttributeFilter } from './attribute-filter.js';

const param = (raw: unknown) => {
  try {
    parseAttributeFilter(raw, 'filters');
  } catch (e) {
    return (e as { param: string }).param;
  }
  return undefined;
};

describe('attribute filters', () => {
  const doc = { kind: 'manual', year: 2024, public: true };

  it.each([
    [{ type: 'eq', key: 'kind', value: 'manual' }, true],
    [{ type: 'eq', key: 'kind', value: 'guide' }, false],
    [{ type: 'ne', key: 'kind', value: 'guide' }, true],
    [{ type: 'ne', key: 'missing', value: 'x' }, true],
    [{ type: 'gt', key: 'year', value: 2023 }, true],
    [{ type: 'gte', key: 'year', value: 2024 }, true],
    [{ type: 'lt', key: 'year', value: 2024 }, false],
    [{ type: 'lte', key: 'year', value: 2024 }, true],
    [{ type: 'gt', key: 'kind', value: 'a' }, true],
    [{ type: 'gt', key: 'year', value: 'a' }, false],
    [{ type: 'eq', key: 'public', value: true }, true],
    [{ type: 'in', key: 'kind', value: ['guide', 'manual'] }, true],
    [{ type: 'nin', key: 'kind', value: ['guide', 'manual'] }, false],
    [{ type: 'eq', key: 'missing', value: 1 }, false],
    [
      {
        type: 'and',
        filters: [
          { type: 'eq', key: 'kind', value: 'manual' },
          { type: 'lt', key: 'year', value: 2020 },
        ],
      },
      false,
    ],
    [
      {
        type: 'or',
        filters: [
          { type: 'eq', key: 'kind', value: 'guide' },
          { type: 'gte', key: 'year', value: 2020 },
        ],
      },
      true,
    ],
  ])('%j → %s', (filter, expected) => {
    expect(matchesFilter(parseAttributeFilter(filter, 'filters'), doc)).toBe(expected);
  });

  it('names the offending field of a bad filter', () => {
    expect(param('x')).toBe('filters');
    expect(param({ type: 'like', key: 'a', value: 1 })).toBe('filters.type');
    expect(param({ type: 'eq', value: 1 })).toBe('filters.key');
    expect(param({ type: 'eq', key: 'a', value: [1] })).toBe('filters.value');
    expect(param({ type: 'in', key: 'a', value: 'x' })).toBe('filters.value');
    expect(param({ type: 'gt', key: 'a', value: true })).toBe('filters.value');
    expect(param({ type: 'and', filters: [] })).toBe('filters.filters');
    expect(
      param({
        type: 'or',
        filters: [
          { type: 'eq', key: 'a', value: 1 },
          { type: 'eq', key: 'b' },
        ],
      }),
    ).toBe('filters.filters[1].value');
  });

  it('bounds nesting instead of recursing without end', () => {
    let deep: unknown = { type: 'eq', key: 'a', value: 1 };
    for (let i = 0; i < 40; i++) deep = { type: 'and', filters: [deep] };
    expect(param(deep)).toMatch(/^filters(\.filters\[0\])+$/);
  });
});
