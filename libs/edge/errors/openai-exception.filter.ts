import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { type Observable, throwError } from 'rxjs';
import { isGatewayError } from '#tool-sdk/errors.js';
import { toRpcError } from './rpc-error.js';
import { sendErrorEnvelope, toErrorEnvelope } from './error-envelope.js';

/**
 * The one place exceptions become HTTP answers; it never writes after headers
 * went out. Scoped to the gateway's controllers (`@GatewayRoutes()`); a host
 * that is nothing but the gateway registers it globally too
 * (`configureGatewayApp(app, { standalone: true })`), so that unknown routes
 * answer in the envelope. Registered globally in a hybrid app, it answers
 * RPC failures with the same envelope rather than writing to a socket that
 * is not HTTP.
 */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void | Observable<never> {
    if (host.getType() !== 'http') return throwError(() => toRpcError(exception));
    const res = host.switchToHttp().getResponse<Response>();
    const { status } = toErrorEnvelope(exception);
    if (status >= 500 && !isGatewayError(exception)) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    sendErrorEnvelope(res, exception);
  }
}
