import { encode } from 'gpt-tokenizer';
import { AUTO_CHUNKING, chunkText } from './token-chunker.js';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('chunkText', () => {
  it('keeps a short text in one chunk', () => {
    expect(chunkText('just a few words', AUTO_CHUNKING)).toEqual(['just a few words']);
    expect(chunkText('   ', AUTO_CHUNKING)).toEqual([]);
  });

  it('cuts token windows of the declared size, overlapping by the declared amount', () => {
    const text = words(2000);
    const total = encode(text).length;
    const strategy = { maxChunkSizeTokens: 200, chunkOverlapTokens: 50, auto: false };
    const chunks = chunkText(text, strategy);
    expect(chunks.length).toBe(Math.ceil((total - 200) / 150) + 1);
    for (const c of chunks) expect(encode(c).length).toBeLessThanOrEqual(200);
    // Consecutive chunks share their overlap: the start of one is inside the previous.
    const tail = chunks[0].split(' ').slice(-5).join(' ');
    expect(chunks[1]).toContain(tail);
    expect(chunks.at(-1)).toContain('word1999');
  });

  it('auto is 800 tokens with 400 of overlap', () => {
    const chunks = chunkText(words(3000), AUTO_CHUNKING);
    expect(Math.max(...chunks.map((c) => encode(c).length))).toBeLessThanOrEqual(800);
    expect(encode(chunks[0]).length).toBeGreaterThan(790);
  });

  it('grows linearly: 10x and 100x the text give about 10x and 100x the chunks', () => {
    const strategy = { maxChunkSizeTokens: 100, chunkOverlapTokens: 0, auto: false };
    const [one, ten, hundred] = [300, 3000, 30000].map((n) => chunkText(words(n), strategy).length);
    expect(ten / one).toBeGreaterThan(8);
    expect(hundred / ten).toBeGreaterThan(9);
  });
});
