import type { LoggerService } from '@nestjs/common';
import type { LogWriter } from './log-writer.service.js';

/** Nest's own start-up chatter: one line per module and route, which the start-up summary replaces. */
const QUIET_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/**
 * Nest's logger, writing through the gateway's `LogWriter` so every line has
 * one format (JSON off a terminal, no colour codes). Boot failures are
 * reported once, by the host, in one line: Nest's copy (`ExceptionHandler`,
 * an injector stack trace) is dropped while `booting` is set.
 */
export class NestLogBridge implements LoggerService {
  booting = true;

  constructor(private readonly writer: LogWriter) {}

  log(message: unknown, context?: string): void {
    // What the summary replaces is still there for `LOG_LEVEL=debug`.
    this.writer.write(context && QUIET_CONTEXTS.has(context) ? 'debug' : 'info', String(message), context ? { context } : {});
  }

  warn(message: unknown, context?: string): void {
    this.writer.write('warn', String(message), context ? { context } : {});
  }

  error(message: unknown, ...rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    if (this.booting && context === 'ExceptionHandler') return;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    this.writer.write('error', String(message instanceof Error ? message.message : message), {
      ...(context ? { context } : {}),
      ...(stack ? { stack } : {}),
    });
  }

  debug(message: unknown, context?: string): void {
    this.writer.write('debug', String(message), context ? { context } : {});
  }

  verbose(message: unknown, context?: string): void {
    this.debug(message, context);
  }
}
