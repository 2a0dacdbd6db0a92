import fc from 'fast-check';
import { MAX_MODEL_NAME_LENGTH, modelVisibleName } from './model-names.js';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;
const none = new Set<string>();

describe('modelVisibleName', () => {
  it('joins the parts with the separator when the result is short, valid and free', () => {
    expect(modelVisibleName(['shell', 'run'], none)).toBe('shell__run');
    expect(modelVisibleName(['db', 'query'], none, '.')).toBe('db_query');
    expect(modelVisibleName(['lookup'], none)).toBe('lookup');
  });

  it('replaces characters function names may not contain', () => {
    expect(modelVisibleName(['my.server', 'get user!'], none)).toBe('my_server__get_user_');
    expect(modelVisibleName(['ünï', 'tool/x'], none)).toBe('_n___tool_x');
  });

  it('never returns an empty name', () => {
    expect(modelVisibleName([''], none)).toBe('tool');
    expect(modelVisibleName([], none)).toBe('tool');
  });

  it('shortens long names to 64 characters with a hash of the full identity', () => {
    const long = ['server_' + 'x'.repeat(40), 'tool_' + 'y'.repeat(40)];
    const name = modelVisibleName(long, none);
    expect(name).toHaveLength(MAX_MODEL_NAME_LENGTH);
    expect(name).toMatch(VALID);
    expect(name).toMatch(/_[0-9a-f]{8}$/);
    expect(name.startsWith('server_xxxx')).toBe(true);
  });

  it('gives two long names that share a 64-character prefix different names', () => {
    const prefix = 'p'.repeat(70);
    const a = modelVisibleName([prefix, 'alpha'], none);
    const b = modelVisibleName([prefix, 'beta'], none);
    expect(a).not.toBe(b);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(b.length).toBeLessThanOrEqual(64);
  });

  it('is stable: the same identity gets the same name in every call', () => {
    const long = ['s'.repeat(50), 't'.repeat(50)];
    expect(modelVisibleName(long, none)).toBe(modelVisibleName(long, new Set()));
    expect(modelVisibleName(['a.b', 'c'], new Set(['a_b__c']))).toBe(modelVisibleName(['a.b', 'c'], new Set(['a_b__c'])));
  });

  it('avoids a taken name with a hashed variant that is itself free', () => {
    const taken = new Set(['ns__run']);
    const name = modelVisibleName(['ns', 'run'], taken);
    expect(name).not.toBe('ns__run');
    expect(name).toMatch(/^ns__run_[0-9a-f]{8}$/);
    expect(taken.has(name)).toBe(false);
  });

  it('tells apart identities that sanitize or join to the same text', () => {
    // "a.b"+"c" and "a_b"+"c" both read a_b__c; "a__b" alone joins to the same text as "a"+"b".
    const first = modelVisibleName(['a_b', 'c'], none);
    const second = modelVisibleName(['a.b', 'c'], new Set([first]));
    expect(first).toBe('a_b__c');
    expect(second).not.toBe(first);
    const joined = modelVisibleName(['a__b'], none);
    const split = modelVisibleName(['a', 'b'], new Set([joined]));
    expect(split).not.toBe(joined);
  });

  it('counts up when the hashed variant is taken too, staying within 64 characters', () => {
    const parts = ['n'.repeat(80)];
    const taken = new Set<string>();
    const names: string[] = [];
    for (let i = 0; i < 12; i++) {
      const name = modelVisibleName(parts, taken);
      expect(taken.has(name)).toBe(false);
      expect(name.length).toBeLessThanOrEqual(MAX_MODEL_NAME_LENGTH);
      expect(name).toMatch(VALID);
      taken.add(name);
      names.push(name);
    }
    expect(new Set(names).size).toBe(12);
    expect(names[1]).toMatch(/_[0-9a-f]{8}_2$/);
    expect(names[11]).toMatch(/_[0-9a-f]{8}_12$/);
  });

  it('always yields a valid name outside `taken`, whatever the parts (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 90 }), { maxLength: 4 }), fc.array(fc.string({ maxLength: 70 })), (parts, takenList) => {
        const taken = new Set(takenList);
        taken.add(modelVisibleName(parts, new Set()));
        const name = modelVisibleName(parts, taken);
        return VALID.test(name) && !taken.has(name);
      }),
      { numRuns: 300 },
    );
  });
});
