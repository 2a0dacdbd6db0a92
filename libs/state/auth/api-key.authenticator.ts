import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { GATEWAY_CONFIG, GatewayConfig } from '../../config/gateway-config.js';
import { AuthenticationError } from '../../core/errors/gateway-error.js';

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Checks inbound API keys (`auth.apiKeys`, env `API_KEYS`). The owner
 * identity it hands out is the key's SHA-256, so stored records never hold a
 * key and a database dump does not reveal one.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly keyHashes: Buffer[];

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.keyHashes = (config.auth?.apiKeys ?? []).map(sha256);
  }

  get enabled(): boolean {
    return this.keyHashes.length > 0;
  }

  /** The owner for an `Authorization` header value: null when authentication is off, else a 401. */
  authenticate(header: string | string[] | undefined): string | null {
    if (!this.enabled) return null;
    const value = Array.isArray(header) ? header[0] : header;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
    if (!match) throw new AuthenticationError('Missing API key: send it as "Authorization: Bearer <key>".');
    const presented = sha256(match[1]);
    // Compare against every key, without stopping early, so timing says nothing about which matched.
    let known = false;
    for (const hash of this.keyHashes) known = timingSafeEqual(hash, presented) || known;
    if (!known) throw new AuthenticationError('Invalid API key.');
    return presented.toString('hex');
  }
}
