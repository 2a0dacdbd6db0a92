import { createHash } from 'node:crypto';
import type { JWTVerifyGetKey } from 'jose';
import type { OidcConfig } from './auth.config-section.js';
import { AuthenticationError, GatewayError, UnavailableError } from '#tool-sdk/errors.js';

/** The identity provider could not be asked for its keys: the caller is not at fault. */
export class IdentityProviderUnavailableError extends UnavailableError {
  constructor(detail: string) {
    super(`The identity provider could not be reached to check the token: ${detail}`, 'oidc_unavailable', 5);
  }
}

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;

/**
 * jose is imported only by a gateway that accepts OIDC tokens, as its
 * verifier is made: most deployments use API keys or no auth, and would
 * otherwise carry its modules in every worker for nothing.
 */
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

/** Why a token was refused, in words a client developer can act on. */
function refusal({ errors }: Jose, err: unknown, claim: string): GatewayError {
  if (err instanceof errors.JWTExpired) return new AuthenticationError('The bearer token has expired.');
  if (err instanceof errors.JWTClaimValidationFailed) {
    return new AuthenticationError(`The bearer token's "${err.claim}" claim is not accepted here.`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return new AuthenticationError('The bearer token is signed with a key the identity provider does not publish.');
  if (err instanceof errors.JWSSignatureVerificationFailed) return new AuthenticationError('The bearer token signature does not verify.');
  if (err instanceof errors.JOSEAlgNotAllowed) return new AuthenticationError('The bearer token is signed with an algorithm that is not accepted.');
  if (err instanceof errors.JWKSTimeout || err instanceof TypeError) return new IdentityProviderUnavailableError((err as Error).message);
  if (err instanceof GatewayError) return err;
  return new AuthenticationError(`The bearer token is not valid (${claim}).`);
}

/**
 * Verifies OIDC bearer tokens: issuer discovery once (retried after a
 * failure), the provider's JWKS cached and refetched when a token names a
 * key id it does not hold (key rotation), then signature, issuer, audience
 * and expiry. The owner is a hash of issuer and claim, so tokens of one
 * identity share stored state and never collide with API-key owners.
 */
export class OidcVerifier {
  private keys?: Promise<{ jose: Jose; getKey: JWTVerifyGetKey }>;

  constructor(private readonly config: OidcConfig) {
    // Started now, not with the first token: a broker caller hears nothing until its token is checked,
    // and under load the import alone has outlasted its silence bound. A failed import is reported
    // when a token awaits it; this copy of the promise only keeps it from going unhandled.
    loadJose().catch(() => undefined);
  }

  async owner(token: string): Promise<string> {
    const { jose, getKey } = await this.keySet();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jose.jwtVerify(token, getKey, {
        issuer: this.config.issuer,
        audience: this.config.audience.length > 0 ? this.config.audience : undefined,
        algorithms: this.config.algorithms,
        clockTolerance: this.config.clockToleranceSec,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw refusal(jose, err, this.config.ownerClaim);
    }
    const subject = payload[this.config.ownerClaim];
    // The owner claim is the identity every stored object is scoped to: an empty or blank one
    // would make every such token one shared caller, and a number or object is not an identifier
    // the issuer promised (RFC 7519 makes `sub` a string). Refused, never coerced.
    if (typeof subject !== 'string' || subject.trim() === '') {
      throw new AuthenticationError(`The bearer token has no "${this.config.ownerClaim}" claim to identify its caller: it must be a non-empty string.`);
    }
    return createHash('sha256').update(`oidc\0${this.config.issuer}\0${subject}`, 'utf8').digest('hex');
  }

  private keySet(): Promise<{ jose: Jose; getKey: JWTVerifyGetKey }> {
    this.keys ??= Promise.all([loadJose(), this.discover()]).then(
      ([jose, uri]) => ({
        jose,
        getKey: jose.createRemoteJWKSet(uri, { cacheMaxAge: this.config.jwksCacheMs, cooldownDuration: this.config.jwksCooldownMs, timeoutDuration: 5_000 }),
      }),
      (err: unknown) => {
        this.keys = undefined;
        throw err;
      },
    );
    return this.keys;
  }

  private async discover(): Promise<URL> {
    if (this.config.jwksUri) return new URL(this.config.jwksUri);
    const url = `${this.config.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let body: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      if (!res.ok) throw new Error(`${url} answered ${res.status}`);
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw new IdentityProviderUnavailableError((err as Error).message);
    }
    // The discovery document must be the configured issuer's own (OpenID Connect Discovery §4.3).
    if (body.issuer !== this.config.issuer || typeof body.jwks_uri !== 'string') {
      throw new IdentityProviderUnavailableError(`${url} does not describe the issuer ${this.config.issuer}.`);
    }
    return new URL(body.jwks_uri);
  }
}
