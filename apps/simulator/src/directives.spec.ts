import { DirectiveError, parseDirectives, parseFaultText } from './directives.js';

describe('parseDirectives', () => {
  it('reads calls with JSON holding spaces, brackets and ]] inside strings', () => {
    const d = parseDirectives('Go [[call search {"q": "a ]] b", "tags": [[1, 2], {"x": [3]}]}]] now');
    expect(d.calls).toEqual([{ name: 'search', args: { q: 'a ]] b', tags: [[1, 2], { x: [3] }] }, round: 1 }]);
    expect(d.cleanText).toBe('Go now');
  });

  it('keeps several calls in prompt order, with rounds and always', () => {
    const d = parseDirectives('[[call a {"n":1}]] [[call@3 b]] [[always c {}]] [[call d { "k" : "v" } ]]');
    expect(d.calls).toEqual([
      { name: 'a', args: { n: 1 }, round: 1 },
      { name: 'b', args: {}, round: 3 },
      { name: 'c', args: {}, round: 'always' },
      { name: 'd', args: { k: 'v' }, round: 1 },
    ]);
  });

  it('reads say, reason, tokens and delay', () => {
    const d = parseDirectives('Hi [[say Hello, world!]] [[reason Think first.]] [[tokens 12]] [[delay ttft=30 token=5]]');
    expect(d).toMatchObject({ say: 'Hello, world!', reason: 'Think first.', tokens: 12, delay: { ttftMs: 30, tokenDelayMs: 5 } });
    expect(d.cleanText).toBe('Hi');
  });

  it('lets a quoted say contain ]]', () => {
    expect(parseDirectives('[[say "a ]] b \\"c\\""]]').say).toBe('a ]] b "c"');
  });

  it('reads every fault setting', () => {
    const d = parseDirectives('[[fault status=429 message="slow down" retry_after=3 stall=10 stall_after=2 ms=50 reset_after=4 malformed_after=5 truncate times=2]]');
    expect(d.fault).toEqual({
      status: 429,
      message: 'slow down',
      retryAfter: 3,
      stall: 10,
      stallAfter: { events: 2, ms: 50 },
      resetAfter: 4,
      malformedAfter: 5,
      truncate: true,
      times: 2,
    });
    expect(d.faultKey).toContain('status=429');
  });

  it('shares the fault syntax with the option and SIM_FAULT', () => {
    expect(parseFaultText(' status=503 times=1 ')).toEqual({ status: 503, times: 1 });
  });

  it('leaves text that only looks like a directive alone', () => {
    const d = parseDirectives('See [[Main Page]] and [[calls]] and arr[[0]]');
    expect(d.calls).toEqual([]);
    expect(d.cleanText).toBe('See [[Main Page]] and [[calls]] and arr[[0]]');
  });

  it.each([
    ['[[call f {"a": }]]', /not valid JSON/],
    ['[[call f {"a": 1]]', /unbalanced/],
    ['[[call f [1]]]', /expected a JSON object/],
    ['[[call]]', /needs a tool name/],
    ['[[call@0 f]]', /rounds start at 1/],
    ['[[tokens many]]', /not a whole number/],
    ['[[say unclosed', /not closed/],
    ['[[fault bogus=1]]', /unknown setting/],
    ['[[fault stall_after=2]]', /needs both/],
    ['[[fault status=200]]', /400-599/],
    ['[[delay ttft=fast]]', /not a whole number/],
  ])('rejects %s', (prompt, message) => {
    expect(() => parseDirectives(prompt)).toThrow(DirectiveError);
    expect(() => parseDirectives(prompt)).toThrow(message);
  });
});
