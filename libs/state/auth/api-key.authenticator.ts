import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { OWNER_IDS, type OwnerIds } from '#config/owner-ids.js';
import { AuthenticationError } from '#tool-sdk/errors.js';
import { AUTH_SETTINGS, type AuthConfig } from './auth.config-section.js';
import { OidcVerifier } from './oidc.verifier.js';

/** Three base64url segments: a compact JWS, as OIDC access and ID tokens are. */
const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

function first(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Checks inbound API keys (`auth.apiKeys`, env `API_KEYS`) and, when
 * `auth.oidc` is set, OIDC bearer tokens. The owner identity it hands out is
 * the key's HMAC-SHA256 under the deployment's secret (`OwnerIds`; or a hash
 * of the token's issuer and owner claim), so stored records, the console and
 * the logs never hold a credential nor anything a key can be checked against.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly keyHashes: Buffer[];
  private readonly oidc?: OidcVerifier;

  constructor(
    @Inject(AUTH_SETTINGS) auth: AuthConfig,
    @Inject(OWNER_IDS) private readonly ownerIds: OwnerIds,
  ) {
    this.keyHashes = auth.apiKeys.map(sha256);
    if (auth.oidc) this.oidc = new OidcVerifier(auth.oidc);
  }

  get enabled(): boolean {
    return this.keyHashes.length > 0 || this.oidc !== undefined;
  }

  /**
   * The owner for a request's key: null when authentication is off, else a
   * 401. The key comes from `Authorization: Bearer <key>` or, as Anthropic
   * clients send it, from `x-api-key: <key>`; a bearer key wins when both are present.
   */
  async authenticate(authorization: string | string[] | undefined, apiKeyHeader?: string | string[]): Promise<string | null> {
    if (!this.enabled) return null;
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(first(authorization) ?? '')?.[1];
    const key = bearer ?? (first(apiKeyHeader)?.trim() || undefined);
    if (!key) throw new AuthenticationError('Missing API key: send it as "Authorization: Bearer <key>" or "x-api-key: <key>".');
    if (this.oidc && JWT.test(key)) return this.oidc.owner(key);
    if (this.keyHashes.length === 0) throw new AuthenticationError('Send an OIDC bearer token: "Authorization: Bearer <JWT>".');
    const presented = sha256(key);
    // Compare against every key, without stopping early, so timing says nothing about which matched.
    let known = false;
    for (const hash of this.keyHashes) known = timingSafeEqual(hash, presented) || known;
    if (!known) throw new AuthenticationError('Invalid API key.');
    return this.ownerIds.of(key);
  }
}
