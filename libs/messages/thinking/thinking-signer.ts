import { createHmac, timingSafeEqual } from 'node:crypto';

/** Binds a signature to its purpose, so a compaction token can never pass as a thinking signature. */
const DOMAIN = 'switchyard.thinking.v1\u0000';

/**
 * Signatures for `thinking` blocks. Anthropic signs thinking so that a
 * client cannot hand the model reasoning it never wrote; here the gateway
 * signs with its configured key (`state.compactionKey`, shared by every
 * replica) and checks the signature when the block comes back. Without a
 * key there is nothing to verify with, so blocks go out with an empty
 * signature and come back as unverified text (see `libs/messages/README.md`).
 */
export class ThinkingSigner {
  constructor(private readonly key: string | null) {}

  get enabled(): boolean {
    return this.key !== null;
  }

  /** Empty when no key is configured: a signature nobody can check would only look trustworthy. */
  sign(thinking: string): string {
    if (!this.key) return '';
    return this.mac(thinking).toString('base64url');
  }

  verify(thinking: string, signature: string): boolean {
    if (!this.key) return false;
    const given = Buffer.from(signature, 'base64url');
    const expected = this.mac(thinking);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(thinking: string): Buffer {
    return createHmac('sha256', this.key!).update(DOMAIN).update(thinking).digest();
  }
}
