import { Utf8StreamDecoder } from './utf8-stream.decoder.js';

/** What `TextDecoder` with `stream: true` makes of the chunks: the reference. */
function reference(chunks: Buffer[]): string {
  const decoder = new TextDecoder('utf-8');
  return chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join('') + decoder.decode();
}

function decoded(chunks: Buffer[]): string {
  const decoder = new Utf8StreamDecoder();
  return chunks.map((chunk) => decoder.decode(chunk)).join('') + decoder.end();
}

/** Every way of cutting `bytes` in two, and in three at a few places. */
function cuts(bytes: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[bytes]];
  for (let i = 0; i <= bytes.length; i++) ways.push([bytes.subarray(0, i), bytes.subarray(i)]);
  for (let i = 1; i < bytes.length; i++) ways.push([bytes.subarray(0, i), Buffer.alloc(0), bytes.subarray(i, i + 1), bytes.subarray(i + 1)]);
  return ways;
}

describe('Utf8StreamDecoder', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const samples: Array<[string, Buffer]> = [
    ['ASCII SSE', Buffer.from('data: {"type":"response.output_text.delta","delta":"hi"}\n\n')],
    ['multi-byte characters', Buffer.from('é 中文 😀 data: {"delta":"naïve ☃"}\n\n')],
    ['a leading byte order mark', Buffer.concat([BOM, Buffer.from('data: {"a":1}\n\n')])],
    ['a byte order mark after text', Buffer.concat([Buffer.from('data: x\n\n'), BOM, Buffer.from('data: y\n\n')])],
    ['two leading byte order marks', Buffer.concat([BOM, BOM, Buffer.from('x')])],
    ['invalid bytes', Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0xe2, 0x82, 0x41, 0xf0, 0x9f, 0x98])],
    ['an encoded lone surrogate', Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62])],
    ['a character cut short at the end', Buffer.from([0x61, 0xe4, 0xb8])],
  ];

  it.each(samples)('decodes %s as TextDecoder does, however the chunks fall', (_name, bytes) => {
    for (const chunks of cuts(bytes)) expect(decoded(chunks)).toBe(reference(chunks));
  });

  it('drops a byte order mark that opens the stream even when it comes alone', () => {
    const chunks = [Buffer.alloc(0), BOM, Buffer.from('data: 1\n\n')];
    expect(decoded(chunks)).toBe('data: 1\n\n');
    expect(decoded(chunks)).toBe(reference(chunks));
  });
});
