import type { ObservabilityConfig } from '../config/observability.config-section.js';

export type LogFields = Record<string, unknown>;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Severity order: a line is written when it is at least as severe as `observability.logLevel`. */
const SEVERITY: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Where lines go (stdout unless a host provides `LOG_SINK`). */
export const LOG_SINK = Symbol('LOG_SINK');

export interface LineSink {
  write(line: string): unknown;
  isTTY?: boolean;
}

/**
 * Structured lines: one JSON object per line when the output is not a
 * terminal (files, pipes, container logs), so collectors parse them without
 * a grammar; `key=value` text on a terminal. Never colour codes.
 *
 * Without Nest: the primary of worker mode writes its lines with this and
 * loads no Nest package (`LogWriter` is the injectable the app uses).
 */
export class LineWriter {
  private readonly json: boolean;

  private readonly sink: LineSink;

  private readonly least: number;

  constructor(settings: Pick<ObservabilityConfig, 'logFormat'> & { logLevel?: LogLevel }, sink?: LineSink) {
    this.sink = sink ?? process.stdout;
    const format = settings.logFormat;
    this.json = format === 'json' || (format === 'auto' && !this.sink.isTTY);
    this.least = SEVERITY[settings.logLevel ?? 'info'];
  }

  /** Whether a line of this level is written, for callers whose fields cost something to build. */
  enabled(level: LogLevel): boolean {
    return SEVERITY[level] >= this.least;
  }

  get isJson(): boolean {
    return this.json;
  }

  write(level: LogLevel, msg: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    this.sink.write(this.format(level, msg, fields) + '\n');
  }

  format(level: LogLevel, msg: string, fields: LogFields): string {
    const time = new Date().toISOString();
    if (this.json) return JSON.stringify({ time, level, msg, ...fields });
    const pairs = Object.entries(fields)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"=]/.test(v) ? v : JSON.stringify(v)}`);
    return [time, level.toUpperCase(), msg, ...pairs].join(' ');
  }
}
