import { resolve, sep } from 'node:path';
import { ConfigError } from '#config/config.loader.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { redactUrl } from '#observability/startup/startup-summary.js';
import { type StorageConfig, readStorageSettings } from '#src/config-sections.js';
import { StartupError } from './startup-failure.js';

export { StartupError } from './startup-failure.js';

/** The storage settings a failure may be about; none when they are themselves what failed. */
function storageOf(config: GatewayConfig): StorageConfig | undefined {
  try {
    return readStorageSettings(config);
  } catch {
    return undefined;
  }
}

/** The error and its causes, outermost first. */
function causes(err: unknown): unknown[] {
  const found: unknown[] = [];
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) found.push(e);
  return found;
}

/**
 * The most telling code in the chain: an operating-system one (`ECONNREFUSED`)
 * wins over a gateway code wrapped around it (`store_unavailable`).
 */
function codeOf(err: unknown): string | undefined {
  const codes: string[] = [];
  for (const e of causes(err)) {
    if (typeof (e as { code?: unknown }).code === 'string') codes.push((e as { code: string }).code);
    else if (e instanceof AggregateError && e.errors[0]) {
      const inner = codeOf(e.errors[0]);
      if (inner) codes.push(inner);
    }
  }
  return codes.find((c) => /^E[A-Z]+$/.test(c)) ?? codes[0];
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

const FS_CODES = new Set(['EEXIST', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EISDIR', 'ENOENT']);

/**
 * A file-system error on the SQLite file or a directory above it: it can come
 * from any store kept beside the state (the file-search store defaults to the
 * same directory), not only from the state store's own open.
 */
function onSqlitePath(err: unknown, sqlitePath: string): boolean {
  if (sqlitePath === ':memory:' || sqlitePath.startsWith('file:')) return false;
  for (let e = err as { code?: unknown; path?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && FS_CODES.has(e.code) && typeof e.path === 'string') {
      const target = resolve(sqlitePath);
      const at = resolve(e.path);
      return target === at || target.startsWith(at.endsWith(sep) ? at : at + sep);
    }
  }
  return false;
}

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
  // A driver whose package is not installed (an optional peer dependency): that message already says what to do.
  if (/optional peer dependency/.test(firstLine(err))) return new StartupError(firstLine(err));
  const storage = config && storageOf(config);
  if (storage?.driver === 'postgres' && (UNREACHABLE.has(code ?? '') || /connect|password authentication|database .* does not exist/i.test(firstLine(err)))) {
    const target = redactUrl(storage.postgresUrl);
    // The innermost cause says what the driver saw (refused, timed out, bad password).
    const chain = causes(err);
    const innermost = chain[chain.length - 1];
    const reason = firstLine(innermost instanceof AggregateError && innermost.errors[0] ? innermost.errors[0] : innermost);
    return new StartupError(
      `Cannot connect to PostgreSQL at ${target} (variable DATABASE_URL, setting storage.postgresUrl): ${reason}. Check that the database is running and reachable, and the URL's credentials.`,
    );
  }
  if (storage?.driver === 'sqlite' && (/state store|SQLite/i.test(firstLine(err)) || onSqlitePath(err, storage.sqlitePath))) {
    // The innermost cause says what the driver saw (refused, timed out, bad password).
    const chain = causes(err);
    const innermost = chain[chain.length - 1];
    const reason = firstLine(innermost instanceof AggregateError && innermost.errors[0] ? innermost.errors[0] : innermost);
    return new StartupError(
      `Cannot open the SQLite database at ${storage.sqlitePath} (variable SQLITE_PATH, setting storage.sqlitePath): ${reason}. Point SQLITE_PATH at a writable file, or set STORAGE_DRIVER=memory.`,
    );
  }
  return new StartupError(`The gateway could not start: ${firstLine(err)}`);
}
