import { OWNER_PROPERTY } from '#tool-sdk/routes/request-owner.js';
import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiKeyAuthenticator } from './api-key.authenticator.js';
import { OPEN_PATHS } from './api-key.guard.js';

/**
 * Express middleware that refuses a request without a valid key before its
 * body is read: the global guard runs only after the body parser, so on its
 * own it let any caller have 16 MB bodies parsed before the 401. The refusal
 * goes to the error handler like any body error (the caller's envelope), on a
 * connection that is then closed, so the unread body is never parsed.
 * The guard stays: it also covers hosts that route without this middleware.
 */
/**
 * Path prefixes of the gateway's own controllers (`@GatewayRoutes()`): an
 * embedding application's routes are its own business, as for the guard.
 */
const GATEWAY_PREFIXES = ['/v1/responses', '/v1/conversations', '/v1/messages', '/v1/models', '/v1/files', '/v1/vector_stores', '/v1/containers'];

function isGatewayPath(path: string): boolean {
  return GATEWAY_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

export function authenticateBeforeBody(app: INestApplication): (req: Request, res: Response, next: NextFunction) => void {
  let auth: ApiKeyAuthenticator | undefined;
  try {
    auth = app.get(ApiKeyAuthenticator, { strict: false });
  } catch {
    // A host without the auth module has nothing to check here.
    auth = undefined;
  }
  return (req, res, next) => {
    if (!auth?.enabled || OPEN_PATHS.has(req.path) || !isGatewayPath(req.path)) return next();
    auth.authenticate(req.headers.authorization, req.headers['x-api-key']).then(
      (owner) => {
        // Known before the body is read, so what the body parser keeps per owner can use it (the guard sets the same again).
        (req as unknown as Record<string, unknown>)[OWNER_PROPERTY] = owner;
        next();
      },
      (err: unknown) => {
        res.setHeader('connection', 'close');
        next(err);
      },
    );
  };
}
