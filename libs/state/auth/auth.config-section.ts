import { Type } from 'class-transformer';
import { IsArray, IsInt, IsOptional, IsString, IsUrl, Min, ValidateNested } from 'class-validator';
import { classSectionKeys, defineConfigSection } from '#config/config-section.js';

/** OpenID Connect bearer tokens (JWTs) accepted beside static API keys. */
export class OidcConfig {
  /** The identity provider's issuer URL; its `/.well-known/openid-configuration` names the key set. */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) issuer!: string;
  /** Accepted `aud` values: a token must name one of them. */
  @IsArray() @IsString({ each: true }) audience: string[] = [];
  /** The claim whose value is the caller's identity (stored state is scoped to it). */
  @IsString() ownerClaim = 'sub';
  /** Skips discovery when set. */
  @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true }) jwksUri?: string;
  /** Accepted signature algorithms. */
  @IsArray() @IsString({ each: true }) algorithms: string[] = ['RS256', 'ES256', 'PS256', 'EdDSA'];
  @IsInt() @Min(0) clockToleranceSec = 30;
  /** How long a fetched key set is trusted before it is fetched again. */
  @IsInt() @Min(0) jwksCacheMs = 600_000;
  /** An unknown key id refetches the key set (rotation), at most once per this long. */
  @IsInt() @Min(0) jwksCooldownMs = 30_000;
}

/** The `auth` section: who may call the gateway. */
export class AuthConfig {
  /** Inbound API keys; empty means no authentication (unless `oidc` is set). */
  @IsArray() @IsString({ each: true }) apiKeys: string[] = [];
  /** Open WebSocket connections per owner (per key, or in total without keys); the next upgrade gets a 429. */
  @IsInt() @Min(1) maxSocketsPerOwner = 64;
  @IsOptional() @ValidateNested() @Type(() => OidcConfig) oidc?: OidcConfig;
}

/** Nest token for the validated `auth` section. */
export const AUTH_SETTINGS = Symbol('AUTH_SETTINGS');

export const authConfigSection = defineConfigSection({
  key: 'auth',
  type: AuthConfig,
  token: AUTH_SETTINGS,
  env: [
    { env: 'API_KEYS', path: 'apiKeys', kind: 'list', secret: true },
    { env: 'MAX_SOCKETS_PER_OWNER', path: 'maxSocketsPerOwner', kind: 'int' },
    { env: 'OIDC_ISSUER', path: 'oidc.issuer', kind: 'string', secret: true },
    { env: 'OIDC_AUDIENCE', path: 'oidc.audience', kind: 'list', secret: true },
    { env: 'OIDC_OWNER_CLAIM', path: 'oidc.ownerClaim', kind: 'string', secret: true },
    { env: 'OIDC_JWKS_URI', path: 'oidc.jwksUri', kind: 'string', secret: true },
  ],
  // `oidc` is checked against its own keys, as the whole section used to be.
  keys: { ...(classSectionKeys(AuthConfig) as Record<string, true>), oidc: classSectionKeys(OidcConfig) },
});

/** The `auth` section of a raw or validated section value (defaults when absent). */
export const parseAuthSettings = authConfigSection.parse;
/** The auth settings of a gateway config, for code outside the Nest container. */
export const readAuthSettings = authConfigSection.read;
