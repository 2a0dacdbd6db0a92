import { type CallHandler, type ExecutionContext, Injectable, Logger, type NestInterceptor } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { type Observable, finalize } from 'rxjs';

/**
 * Times every exchange (APP_INTERCEPTOR). Over HTTP the gateway writes its
 * own replies (JSON or SSE), so the time is taken when the headers go out and
 * sent as `server-timing`; over a broker it is logged when the reply ends.
 */
@Injectable()
export class TimingInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Timing');

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const start = performance.now();
    if (context.getType() === 'http') {
      const res = context.switchToHttp().getResponse<ServerResponse>();
      const writeHead = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
        if (!this.headersSent) this.setHeader('server-timing', `gateway;dur=${(performance.now() - start).toFixed(1)}`);
        return writeHead.apply(this, args);
      } as ServerResponse['writeHead'];
      return next.handle();
    }
    return next.handle().pipe(finalize(() => this.logger.log(`${context.getType()} exchange took ${(performance.now() - start).toFixed(1)} ms`)));
  }
}
