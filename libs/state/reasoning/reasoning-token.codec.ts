import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ReasoningItem } from '#tool-sdk/items.js';
import type { ReasoningSealer } from '#core/loop/reasoning-sealer.interface.js';

/** Encrypted and authenticated (AES-256-GCM); the version lets the format change without misreading older items. */
const SEALED = 'syr1';
/** Readable and unauthenticated: what a gateway without a key hands out (see libs/state/README.md). */
const PLAIN = 'syr0';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a token carries: the model's reasoning as it would see it again. */
interface Payload {
  /** The reasoning text. */
  c: string;
  /** The summary the model wrote itself (not the one shown to a client that asked for one). */
  s: string[];
  /** The upstream's own encrypted reasoning, when it gave one. */
  e: string | null;
}

/**
 * `encrypted_content` of reasoning items: `syr1.<base64url iv|ciphertext|tag>`.
 *
 * Unlike a compaction summary, reasoning is encrypted, not only signed: it is
 * the model's working, which OpenAI does not show clients either, and clients
 * are told the field is opaque. The key is the compaction key
 * (`state.compactionKey`, the same on every replica), hashed with this
 * purpose so that neither token can pass for the other. Without a key the
 * token is `syr0.<base64url JSON>`: reasoning still round-trips for
 * `store: false` clients, but unprotected, and a keyed gateway refuses it.
 */
export class ReasoningTokenCodec implements ReasoningSealer {
  private readonly key: Buffer | null;

  constructor(secret: string | null) {
    this.key = secret ? createHash('sha256').update(`switchyard-reasoning:${secret}`).digest() : null;
  }

  get encrypting(): boolean {
    return this.key !== null;
  }

  seal(reasoning: ReasoningItem): string {
    const payload: Payload = {
      c: (reasoning.content ?? []).map((part) => part.text).join(''),
      s: reasoning.summary.map((part) => part.text),
      e: reasoning.encrypted_content ?? null,
    };
    const json = Buffer.from(JSON.stringify(payload), 'utf8');
    if (!this.key) return `${PLAIN}.${json.toString('base64url')}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(SEALED));
    const body = Buffer.concat([iv, cipher.update(json), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED}.${body.toString('base64url')}`;
  }

  recognizes(token: string): boolean {
    return token.startsWith(`${SEALED}.`) || token.startsWith(`${PLAIN}.`);
  }

  open(token: unknown, param: string): ReasoningItem {
    const invalid = (why: string) => new InvalidRequestError(`${param} is not reasoning from this gateway: ${why}.`, param, 'invalid_encrypted_content');
    if (typeof token !== 'string' || token.length === 0) throw invalid('encrypted_content must be a non-empty string');
    const dot = token.indexOf('.');
    const format = token.slice(0, dot);
    const body = Buffer.from(token.slice(dot + 1), 'base64url');
    let json: Buffer;
    if (format === SEALED) {
      if (!this.key) throw invalid('it is encrypted, and this gateway has no key (state.compactionKey) to open it');
      if (body.length < IV_BYTES + TAG_BYTES) throw invalid('it is truncated');
      json = this.decrypt(body, invalid);
    } else if (format === PLAIN) {
      // A keyed gateway only trusts what it encrypted: a plain token could say anything.
      if (this.key) throw invalid('it is not encrypted');
      json = body;
    } else {
      throw invalid('unknown format');
    }
    let decoded: unknown;
    try {
      decoded = JSON.parse(json.toString('utf8'));
    } catch {
      throw invalid('the content is not readable');
    }
    const p = decoded as Partial<Payload> | null;
    if (!p || typeof p.c !== 'string' || !Array.isArray(p.s) || !p.s.every((s) => typeof s === 'string') || (p.e !== null && typeof p.e !== 'string')) {
      throw invalid('the content is incomplete');
    }
    return {
      type: 'reasoning',
      summary: p.s.map((text) => ({ type: 'summary_text' as const, text })),
      content: p.c ? [{ type: 'reasoning_text' as const, text: p.c }] : [],
      encrypted_content: p.e,
    };
  }

  private decrypt(body: Buffer, invalid: (why: string) => Error): Buffer {
    const iv = body.subarray(0, IV_BYTES);
    const tag = body.subarray(body.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key!, iv);
    decipher.setAAD(Buffer.from(SEALED));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw invalid('it was altered, or sealed by a gateway with another key');
    }
  }
}
