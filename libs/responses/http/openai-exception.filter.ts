import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { isGatewayError } from '../../core/errors/gateway-error.js';
import { sendErrorEnvelope, toErrorEnvelope } from './error-envelope.js';

/** The one place exceptions become HTTP answers; it never writes after headers went out. */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
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
