import type { LoggerService } from '@nestjs/common';
import { isGatewayError } from '#tool-sdk/errors.js';
import { errorKind } from '../errors/error-kinds.js';

/**
 * The log line of an error met after the handler returned, when no
 * exception filter sees it. An error the gateway expected (a `GatewayError`:
 * an upstream that failed, a limit) is one line with its status, type and
 * code, never its message (an upstream's own text may quote the request);
 * anything else is a bug, logged with its stack as the filters do.
 */
export function logEdgeError(logger: Pick<LoggerService, 'error' | 'warn'>, surface: string, err: unknown, status: number): void {
  if (isGatewayError(err)) {
    logger.warn(`${surface}: the run ended with ${status} ${errorKind(err).type}${err.code ? ` (${err.code})` : ''}`);
    return;
  }
  logger.error(`${surface}: the run ended with an unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
}
