import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidRequestError } from '#tool-sdk/errors.js';

/** What a compaction item carries, inside its opaque `encrypted_content`. */
export interface CompactionPayload {
  /** The model-written summary of the compacted part of the conversation. */
  summary: string;
  /** Epoch seconds. */
  createdAt: number;
  /** Model that wrote the summary. */
  model: string;
}

/** Versioned so that the format can change without misreading older items. */
const PREFIX = 'syc1';

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * Encodes compaction payloads as `syc1.<base64url JSON>[.<base64url HMAC>]`.
 *
 * The content is readable by design (base64url JSON, not encryption): it is
 * the client's own conversation. The signature, present when the gateway has
 * a key, is what matters: it stops a client from slipping the model an
 * arbitrary "summary" dressed up as the gateway's own.
 */
export class CompactionTokenCodec {
  private readonly key: Buffer | null;

  constructor(secret: string | null) {
    // Hashing fixes the HMAC key length whatever the configured secret looks like.
    this.key = secret ? createHash('sha256').update(`switchyard-compaction:${secret}`).digest() : null;
  }

  get signing(): boolean {
    return this.key !== null;
  }

  encode(payload: CompactionPayload): string {
    const body = `${PREFIX}.${b64url(JSON.stringify({ s: payload.summary, t: payload.createdAt, m: payload.model }))}`;
    return this.key ? `${body}.${b64url(this.sign(body))}` : body;
  }

  /** Throws a 400 naming `param` for anything this gateway did not produce. */
  decode(token: unknown, param: string): CompactionPayload {
    const invalid = (why: string) => new InvalidRequestError(`${param} is not a valid compaction item from this gateway: ${why}.`, param, 'invalid_compaction');
    if (typeof token !== 'string' || token.length === 0) throw invalid('encrypted_content must be a non-empty string');
    const parts = token.split('.');
    if (parts[0] !== PREFIX || parts.length < 2 || parts.length > 3) throw invalid('unknown format');
    const body = `${parts[0]}.${parts[1]}`;
    if (this.key) {
      if (parts.length !== 3) throw invalid('it is not signed');
      const given = Buffer.from(parts[2], 'base64url');
      const expected = this.sign(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('the signature does not match');
    }
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      throw invalid('the content is not readable');
    }
    const p = decoded as { s?: unknown; t?: unknown; m?: unknown };
    if (!p || typeof p.s !== 'string' || typeof p.t !== 'number' || typeof p.m !== 'string') throw invalid('the content is incomplete');
    return { summary: p.s, createdAt: p.t, model: p.m };
  }

  private sign(body: string): Buffer {
    return createHmac('sha256', this.key!).update(body).digest();
  }
}
