import type { ReasoningItem } from '#tool-sdk/items.js';
import { CompactionTokenCodec } from '../compaction/compaction-token.codec.js';
import { ReasoningTokenCodec } from './reasoning-token.codec.js';

const KEY = 'a-long-enough-secret-key';
const reasoning: ReasoningItem = {
  type: 'reasoning',
  summary: [{ type: 'summary_text', text: 'Check the forecast.' }],
  content: [{ type: 'reasoning_text', text: 'The user wants Paris weather; Ünïcödé survives.' }],
  encrypted_content: 'upstream-own',
};
const PARAM = 'input[2].encrypted_content';
const refused = (why: RegExp) => expect.objectContaining({ name: 'InvalidRequestError', code: 'invalid_encrypted_content', param: PARAM, message: expect.stringMatching(why) });

describe('ReasoningTokenCodec', () => {
  it('with a key, encrypts: the token reads as nothing, differs each time, and opens to the reasoning as the model wrote it', () => {
    const codec = new ReasoningTokenCodec(KEY);
    const a = codec.seal(reasoning);
    const b = codec.seal(reasoning);
    expect(a).toMatch(/^syr1\.[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(Buffer.from(a.slice(5), 'base64url').toString('latin1')).not.toContain('Paris');
    expect(codec.open(a, PARAM)).toEqual(reasoning);
    expect(codec.recognizes(a)).toBe(true);
    expect(codec.recognizes('gAAAAAB-openai-style')).toBe(false);
  });

  it('refuses a token altered by one bit, sealed under another key, unencrypted, truncated or malformed, naming the field', () => {
    const codec = new ReasoningTokenCodec(KEY);
    const token = codec.seal(reasoning);
    const bytes = Buffer.from(token.slice(5), 'base64url');
    bytes[bytes.length - 20] ^= 1;
    expect(() => codec.open(`syr1.${bytes.toString('base64url')}`, PARAM)).toThrow(refused(/altered/));
    expect(() => codec.open(new ReasoningTokenCodec('another-gateway-secret').seal(reasoning), PARAM)).toThrow(refused(/altered/));
    expect(() => codec.open(new ReasoningTokenCodec(null).seal(reasoning), PARAM)).toThrow(refused(/not encrypted/));
    expect(() => codec.open('syr1.AAAA', PARAM)).toThrow(refused(/truncated/));
    for (const bad of ['', 42, 'syr9.x']) expect(() => codec.open(bad, PARAM)).toThrow(refused(/./));
  });

  it('cannot be passed a compaction token, nor a compaction codec a reasoning token (separate purposes of one key)', () => {
    const compaction = new CompactionTokenCodec(KEY).encode({ summary: 's', createdAt: 1, model: 'm' });
    expect(() => new ReasoningTokenCodec(KEY).open(compaction, PARAM)).toThrow(refused(/unknown format/));
    expect(() => new CompactionTokenCodec(KEY).decode(new ReasoningTokenCodec(KEY).seal(reasoning), PARAM)).toThrow(/not a valid compaction/);
  });

  it('without a key, round-trips readable tokens, checks their shape, and says it cannot open encrypted ones', () => {
    const codec = new ReasoningTokenCodec(null);
    const token = codec.seal({ ...reasoning, encrypted_content: null });
    expect(token).toMatch(/^syr0\./);
    expect(codec.open(token, PARAM)).toEqual({ ...reasoning, encrypted_content: null });
    const incomplete = `syr0.${Buffer.from(JSON.stringify({ c: 'x' })).toString('base64url')}`;
    expect(() => codec.open(incomplete, PARAM)).toThrow(refused(/incomplete/));
    expect(() => codec.open(new ReasoningTokenCodec(KEY).seal(reasoning), PARAM)).toThrow(refused(/no key/));
  });

  it('keeps an empty reasoning empty', () => {
    const codec = new ReasoningTokenCodec(KEY);
    expect(codec.open(codec.seal({ type: 'reasoning', summary: [], content: [] }), PARAM)).toEqual({ type: 'reasoning', summary: [], content: [], encrypted_content: null });
  });
});
