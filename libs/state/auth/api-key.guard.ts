import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GATEWAY_ROUTES } from '#tool-sdk/routes/gateway-routes.js';
import type { Request } from 'express';
import { OWNER_PROPERTY } from '#tool-sdk/routes/request-owner.js';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';

/** Probes from orchestrators and load balancers carry no key. */
export const OPEN_PATHS = new Set(['/health', '/ready']);

/**
 * Global guard: every gateway HTTP route but the probes needs a valid key when keys
 * are configured, and the request carries its owner identity from here on
 * (storage reads and writes are scoped to it). The WebSocket upgrade, which
 * never reaches a route, is checked by the socket server with the same
 * authenticator.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly auth: ApiKeyAuthenticator,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || !this.auth.enabled) return true;
    // The host application's own routes are its business, not the gateway's keys'.
    if (!this.reflector.get<boolean>(GATEWAY_ROUTES, context.getClass())) return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (OPEN_PATHS.has(req.path)) return true;
    (req as unknown as Record<string, unknown>)[OWNER_PROPERTY] = await this.auth.authenticate(req.headers.authorization, req.headers['x-api-key']);
    return true;
  }
}
