import { CompactionTokenCodec } from './compaction-token.codec.js';

const payload = { summary: 'The user likes teal. Ünïcödé survives.', createdAt: 1_760_000_000, model: 'm' };

describe('CompactionTokenCodec', () => {
  it('round-trips signed and unsigned payloads', () => {
    const signed = new CompactionTokenCodec('a-long-enough-secret-key');
    const token = signed.encode(payload);
    expect(token.split('.')).toHaveLength(3);
    expect(token).toMatch(/^syc1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(signed.decode(token, 'p')).toEqual(payload);

    const unsigned = new CompactionTokenCodec(null);
    expect(unsigned.encode(payload).split('.')).toHaveLength(2);
    expect(unsigned.decode(unsigned.encode(payload), 'p')).toEqual(payload);
  });

  it('refuses tampered, foreign, unsigned and malformed tokens when it has a key, naming the parameter', () => {
    const codec = new CompactionTokenCodec('a-long-enough-secret-key');
    const [prefix, body, signature] = codec.encode(payload).split('.');
    const otherBody = Buffer.from(JSON.stringify({ s: 'forged', t: 1, m: 'm' })).toString('base64url');
    const foreign = new CompactionTokenCodec('another-gateway-secret-key').encode(payload);
    for (const token of [`${prefix}.${otherBody}.${signature}`, foreign, `${prefix}.${body}`, 'syc2.x.y', '', 42, `${prefix}.!!!.${signature}`]) {
      expect(() => codec.decode(token, 'input[3].encrypted_content')).toThrow(
        expect.objectContaining({ name: 'InvalidRequestError', code: 'invalid_compaction', param: 'input[3].encrypted_content' }),
      );
    }
  });

  it('reads signed tokens without a key (it cannot check them) but never incomplete ones', () => {
    const token = new CompactionTokenCodec('a-long-enough-secret-key').encode(payload);
    expect(new CompactionTokenCodec(null).decode(token, 'p')).toEqual(payload);
    const incomplete = `syc1.${Buffer.from(JSON.stringify({ s: 'x' })).toString('base64url')}`;
    expect(() => new CompactionTokenCodec(null).decode(incomplete, 'p')).toThrow(/incomplete/);
  });
});
