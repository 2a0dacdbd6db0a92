import { ConfigError } from '../../../libs/config/config.loader.js';
import type { GatewayConfig } from '../../../libs/config/gateway-config.js';
import { redactUrl } from '../../../libs/observability/startup/startup-summary.js';

/** A start-up failure in the words an operator needs: what, which setting, and the fix. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

function codeOf(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') return e.code;
    if (e instanceof AggregateError && e.errors[0]) return codeOf(e.errors[0]);
  }
  return undefined;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** Maps what went wrong at boot to one line naming the setting. */
export function describeStartupError(err: unknown, config?: GatewayConfig): StartupError {
  if (err instanceof StartupError) return err;
  if (err instanceof ConfigError) return new StartupError(err.message, 2);
  const code = codeOf(err);
  const server = config?.server;
  if (code === 'EADDRINUSE' && server) {
    return new StartupError(
      `Port ${server.port} on ${server.host} is already in use (setting server.port, variable PORT): stop the process holding it or choose another port, e.g. PORT=${server.port + 1}.`,
    );
  }
  if (code === 'EACCES' && server && /listen/i.test(firstLine(err))) {
    return new StartupError(`Not allowed to listen on port ${server.port} (setting server.port, variable PORT): ports below 1024 need privileges; use e.g. PORT=8080.`);
  }
  const storage = config?.storage;
  if (storage?.driver === 'postgres' && (UNREACHABLE.has(code ?? '') || /connect|password authentication|database .* does not exist/i.test(firstLine(err)))) {
    const target = redactUrl(storage.postgresUrl);
    const reason = (err as { cause?: unknown }).cause ? firstLine((err as { cause?: unknown }).cause) : firstLine(err);
    return new StartupError(
      `Cannot connect to PostgreSQL at ${target} (variable DATABASE_URL, setting storage.postgresUrl): ${reason}. Check that the database is running and reachable, and the URL's credentials.`,
    );
  }
  if (storage?.driver === 'sqlite' && /state store|SQLite/i.test(firstLine(err))) {
    const reason = (err as { cause?: unknown }).cause ? firstLine((err as { cause?: unknown }).cause) : firstLine(err);
    return new StartupError(
      `Cannot open the SQLite database at ${storage.sqlitePath} (variable SQLITE_PATH, setting storage.sqlitePath): ${reason}. Point SQLITE_PATH at a writable file, or set STORAGE_DRIVER=memory.`,
    );
  }
  return new StartupError(`The gateway could not start: ${firstLine(err)}`);
}
