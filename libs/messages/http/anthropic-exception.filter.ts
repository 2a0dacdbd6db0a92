import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { isGatewayError } from '#tool-sdk/errors.js';
import { noteErrorForLog } from '#edge/errors/error-envelope.js';
import { toAnthropicError } from './anthropic-error.js';

/**
 * Errors on the Messages routes (refused keys, bad bodies) in Anthropic's
 * envelope. Scoped to the Messages controller, where it takes precedence
 * over the global OpenAI filter; like it, it never writes after headers.
 */
@Catch()
export class AnthropicExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const { status, body, headers } = toAnthropicError(exception);
    if (status >= 500 && !isGatewayError(exception)) this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    if (res.headersSent) {
      if (!res.writableEnded) res.end();
      return;
    }
    noteErrorForLog(res, exception);
    for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
    res.status(status).json(body);
  }
}
