import type { Request } from 'express';

/** Set by the API-key guard: which inbound key made this request (null when auth is off). */
export const OWNER_PROPERTY = 'switchyardOwner';

export function requestOwner(req: Request): string | null {
  return ((req as unknown as Record<string, unknown>)[OWNER_PROPERTY] as string | undefined) ?? null;
}
