import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { UnsupportedMediaTypeError } from '#tool-sdk/errors.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Runs after the JSON parser: a body the parser skipped because it was not
 * labelled JSON would otherwise reach the route as "no body" and be refused
 * with a confusing "missing field". Say what is wrong instead: a 415.
 * Multipart bodies pass: the upload routes parse them.
 */
export function requireJsonBody(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!BODY_METHODS.has(req.method) || req.body !== undefined || !hasBody(req)) return next();
    const type = req.headers['content-type'];
    // Uploads (Files, container files) are multipart: their routes read the body themselves.
    if (typeof type === 'string' && /^multipart\/form-data\b/i.test(type)) return next();
    next(new UnsupportedMediaTypeError(`The request body must be JSON sent with "Content-Type: application/json" (got ${type ? `"${type}"` : 'no Content-Type'}).`, null));
  };
}
