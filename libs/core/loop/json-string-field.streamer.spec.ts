import { finishField, pushField, startField, type FieldStream } from './json-string-field.streamer.js';

/** Feeds `pieces` one by one and returns what each push produced, and the finish of the stream they left. */
function feed(pieces: string[], field = 'input'): { streamer: { finish: (full: string) => ReturnType<typeof finishField> }; outputs: string[] } {
  let stream: FieldStream = startField(field);
  const outputs = pieces.map((p) => {
    const pushed = pushField(stream, p);
    stream = pushed.stream;
    return pushed.decoded;
  });
  const last = stream;
  return { streamer: { finish: (full) => finishField(last, full) }, outputs };
}

/** Every way of cutting `text` in two, pushed as two pieces. */
function everySplit(text: string): Array<[string, string]> {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe('the JSON string-field stream', () => {
  it('streams the field value as the JSON arrives', () => {
    const { streamer, outputs } = feed(['{"in', 'put": "he', 'llo wo', 'rld"}']);
    expect(outputs).toEqual(['', 'he', 'llo wo', 'rld']);
    expect(streamer.finish('{"input": "hello world"}')).toEqual({ value: 'hello world', rest: '' });
  });

  it('tolerates whitespace around the key and colon', () => {
    const { outputs } = feed([' \n{ "input"  :\t"a', 'b"}']);
    expect(outputs).toEqual(['a', 'b']);
  });

  it('decodes \\n, \\t, \\" and \\\\ even when a piece ends right after the backslash', () => {
    const { streamer, outputs } = feed(['{"input":"line1\\', 'nline2 \\', '"q\\', '" \\', '\\ \\', 't"}']);
    expect(outputs).toEqual(['line1', '\nline2 ', '"q', '" ', '\\ ', '\t']);
    const full = '{"input":"line1\\nline2 \\"q\\" \\\\ \\t"}';
    expect(outputs.join('')).toBe(JSON.parse(full).input);
    expect(streamer.finish(full)).toEqual({ value: 'line1\nline2 "q" \\ \t', rest: '' });
  });

  it('decodes \\uXXXX split anywhere inside the sequence', () => {
    const full = '{"input":"caf\\u00e9!"}';
    for (const [a, b] of everySplit(full)) {
      const { streamer, outputs } = feed([a, b]);
      expect(outputs.join('')).toBe('café!');
      expect(streamer.finish(full)).toEqual({ value: 'café!', rest: '' });
    }
  });

  it('never emits a partial escape: no stray backslash or hex digits appear mid-sequence', () => {
    const { outputs } = feed(['{"input":"x\\u', '00', 'e', '9y"}']);
    expect(outputs).toEqual(['x', '', '', 'éy']);
  });

  it('rebuilds astral characters sent as surrogate-pair escapes', () => {
    const full = '{"input":"\\ud83d\\ude00 ok"}';
    for (const [a, b] of everySplit(full)) {
      const { outputs } = feed([a, b]);
      expect(outputs.join('')).toBe('😀 ok');
    }
  });

  it('decodes the same for every single-character chunking', () => {
    const full = JSON.stringify({ input: 'a "quoted"\nline\t\\ é \u0001 end' });
    const { streamer, outputs } = feed([...full]);
    expect(outputs.join('')).toBe(JSON.parse(full).input);
    expect(streamer.finish(full).rest).toBe('');
  });

  it('stops at the closing quote and ignores what follows', () => {
    const { streamer, outputs } = feed(['{"input":"abc", "extra"', ': "zzz"}']);
    expect(outputs).toEqual(['abc', '']);
    expect(streamer.finish('{"input":"abc", "extra": "zzz"}')).toEqual({ value: 'abc', rest: '' });
  });

  it('yields nothing for non-JSON text; finish returns the raw text as the value, all of it unsent', () => {
    const { streamer, outputs } = feed(['SELECT * ', 'FROM t;']);
    expect(outputs).toEqual(['', '']);
    expect(streamer.finish('SELECT * FROM t;')).toEqual({ value: 'SELECT * FROM t;', rest: 'SELECT * FROM t;' });
  });

  it('yields nothing when another field comes first; finish still extracts the field', () => {
    const full = '{"mode":"fast","input":"payload"}';
    const { streamer, outputs } = feed([full.slice(0, 12), full.slice(12)]);
    expect(outputs).toEqual(['', '']);
    expect(streamer.finish(full)).toEqual({ value: 'payload', rest: 'payload' });
  });

  it('does not mistake a longer key sharing the prefix for the field', () => {
    const full = '{"input_kind":"x","input":"y"}';
    const { streamer, outputs } = feed([full]);
    expect(outputs).toEqual(['']);
    expect(streamer.finish(full).value).toBe('y');
  });

  it('finish returns only what was not streamed yet when the stream was cut before the end', () => {
    const { streamer, outputs } = feed(['{"input":"hello w']);
    expect(outputs).toEqual(['hello w']);
    expect(streamer.finish('{"input":"hello world"}')).toEqual({ value: 'hello world', rest: 'orld' });
  });

  it('finish returns the raw text when the field is not a string', () => {
    const { streamer } = feed(['{"input": 42}']);
    expect(streamer.finish('{"input": 42}')).toEqual({ value: '{"input": 42}', rest: '{"input": 42}' });
  });

  it('follows another field name when asked to', () => {
    const { streamer, outputs } = feed(['{"code":"print(1)', '"}'], 'code');
    expect(outputs).toEqual(['print(1)', '']);
    expect(streamer.finish('{"code":"print(1)"}')).toEqual({ value: 'print(1)', rest: '' });
  });
});
