import { Inject, Injectable } from '@nestjs/common';
import { OBSERVABILITY_SETTINGS, type ObservabilityConfig } from '../config/observability.config-section.js';
import type { RequestRecord } from '../context/request-record.js';
import { TracingService } from '../tracing/tracing.service.js';
import { genAiUsageAttributes } from '../run/token-usage.js';
import { LogWriter } from './log-writer.service.js';
import { requestLogFields } from './request-log-fields.util.js';

/** Ends a request: its one log line, and its span. */
@Injectable()
export class RequestLog {
  constructor(
    private readonly writer: LogWriter,
    private readonly tracing: TracingService,
    @Inject(OBSERVABILITY_SETTINGS) private readonly settings: ObservabilityConfig,
  ) {}

  finish(record: RequestRecord, owner: string | null | undefined): void {
    // The line's fields only when there is a line to write them to.
    if (this.settings.requestLog) {
      const level = (record.status ?? 0) >= 500 ? 'error' : 'info';
      this.writer.write(level, 'request', requestLogFields(record, owner));
    }
    if (record.span) {
      record.span.updateName(`${record.method} ${record.route()}`);
      record.span.setAttributes({
        'http.request.method': record.method,
        'http.route': record.route(),
        'http.response.status_code': record.status ?? 0,
        ...(record.responseId ? { 'switchyard.response_id': record.responseId } : {}),
        ...(record.model ? { 'gen_ai.request.model': record.model } : {}),
        ...(record.responseId ? { 'gen_ai.response.id': record.responseId } : {}),
        ...(record.tokens ? genAiUsageAttributes(record.tokens) : {}),
        'switchyard.rounds': record.rounds,
      });
      this.tracing.end(record.span, (record.status ?? 0) >= 500 ? { code: record.errorCode ?? String(record.status) } : null);
    }
  }
}
