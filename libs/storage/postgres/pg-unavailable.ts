import { StoreUnavailableError, isGatewayError } from '#tool-sdk/errors.js';

/**
 * A server's error report (node-postgres' `DatabaseError`), told by its shape: this module is
 * also used by stores that load the driver lazily (the SQL port), so it must not import `pg`.
 */
export function sqlStateOf(e: unknown): string | undefined {
  if (e === null || typeof e !== 'object') return undefined;
  const { code, severity } = e as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Socket error codes that mean the database cannot be reached right now. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * SQLSTATE classes and codes of a server that is there but cannot serve:
 * connection exceptions (08), shutting down or starting (57P01-57P03), too
 * many connections (53300), a statement cancelled by `statement_timeout` (57014).
 */
function unavailableSqlState(code: string | undefined): boolean {
  return !!code && (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '57014'].includes(code));
}

/**
 * True for failures that say nothing about the request and everything about
 * the database being out of reach: refused or dropped connections, the
 * connect and query timeouts, a server shutting down.
 */
export function isUnavailable(e: unknown): boolean {
  const sqlState = sqlStateOf(e);
  if (sqlState) return unavailableSqlState(sqlState);
  // Duck-typed: socket errors may come from another realm than this module's `Error`.
  if (e === null || typeof e !== 'object') return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  // node-postgres reports its own timeouts and lost connections by message only.
  return typeof message === 'string' && /timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error/i.test(message);
}

/** A failure of the database being out of reach becomes the 503 `StoreUnavailableError`; anything else is left as it is. */
export function translateUnavailable(e: unknown): unknown {
  if (isGatewayError(e) || !isUnavailable(e)) return e;
  // The driver's own error stays as the cause: start-up messages and logs show what it saw.
  return Object.assign(new StoreUnavailableError(), { cause: e });
}
