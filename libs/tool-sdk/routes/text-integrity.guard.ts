import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { assertStorableText } from '../storable-text.js';
import { scannedBodyOf } from './scanned-body.js';

/**
 * Every gateway route (`@GatewayRoutes()`) refuses NUL and unpaired
 * surrogates in its path ids, query string and JSON body with a 400 naming
 * the field, before the controller runs: a lookup, a save or a model run
 * never sees text that one store keeps and the other refuses. Runs after
 * routing, so that a path id is named by its route parameter. Multipart
 * bodies are read by their routes, which check their own fields. A body
 * whose bytes the body reader found free of such escapes (`ScannedBody`) is
 * not walked again.
 */
export class TextIntegrityGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    const params = req.params;
    if (params) for (const name in params) assertStorableText(params[name], name);
    // express parses the query string on each read of `req.query`: a URL without one has none to check.
    if (typeof req.url !== 'string' || req.url.includes('?')) assertStorableText(req.query ?? {});
    if (req.body !== undefined && scannedBodyOf(req)?.storableText !== true) assertStorableText(req.body);
    return true;
  }
}
