import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthenticationError } from '#tool-sdk/errors.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { usageConfigSection } from '#observability/usage/usage.config-section.js';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The key a request presents: `Authorization: Bearer <key>`, else `x-api-key`. */
function presentedKey(req: Request): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const header = req.headers['x-api-key'];
  return bearer ?? ((Array.isArray(header) ? header[0] : header)?.trim() || undefined);
}

/**
 * The console's API answers administrator keys only (`usage.adminKeys`),
 * whether or not the gateway checks API keys at all: what it shows is every
 * tenant's. Keys are compared as hashes, each one, without stopping early.
 */
@Injectable()
export class AdminKeyGuard implements CanActivate {
  private readonly hashes: Buffer[];

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.hashes = usageConfigSection.read(config).adminKeys.map(sha256);
  }

  get configured(): boolean {
    return this.hashes.length > 0;
  }

  canActivate(context: ExecutionContext): boolean {
    const key = presentedKey(context.switchToHttp().getRequest<Request>());
    if (!key) throw new AuthenticationError('The console needs an administrator key (usage.adminKeys): send it as "Authorization: Bearer <key>".');
    const presented = sha256(key);
    let admin = false;
    for (const hash of this.hashes) admin = timingSafeEqual(hash, presented) || admin;
    if (!admin) throw new AuthenticationError('Not an administrator key: the console answers the keys of usage.adminKeys (USAGE_ADMIN_KEYS).');
    return true;
  }
}
