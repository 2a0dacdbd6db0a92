import { type ArgumentsHost, Catch, Logger, type RpcExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';
import { isGatewayError } from '#tool-sdk/errors.js';
import { toRpcError } from '#edge/errors/rpc-error.js';

/**
 * RPC failures of the gateway's own message handlers travel as the OpenAI
 * envelope plus status (Nest's default filter would turn anything but an
 * `RpcException` into "Internal server error"). Scoped to the gateway's RPC
 * controller, so a host's own handlers keep their errors.
 */
@Catch()
export class OpenAiRpcExceptionFilter implements RpcExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    const payload = toRpcError(exception);
    // A payload was mapped, and logged, by the responder; only what a handler threw is logged here.
    if (payload.status >= 500 && !isGatewayError(exception) && payload !== exception) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    return throwError(() => payload);
  }
}
