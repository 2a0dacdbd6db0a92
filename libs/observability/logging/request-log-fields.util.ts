import type { RequestRecord } from '../context/request-record.js';
import type { LogFields } from './log-writer.service.js';

/**
 * The fields of a request's log line. Only what identifies and measures the
 * exchange: no bodies, arguments, tool outputs or headers; the owner is the
 * key's hash, shortened.
 */
export function requestLogFields(record: RequestRecord, owner: string | null | undefined): LogFields {
  const fields: LogFields = {
    method: record.method,
    route: record.route(),
    path: record.path,
    status: record.status,
    duration_ms: Math.round(record.elapsedMs() * 10) / 10,
  };
  if (record.responseId) fields.response_id = record.responseId;
  if (record.responseStatus) fields.response_status = record.responseStatus;
  if (record.model) fields.model = record.model;
  if (record.stream !== undefined) fields.stream = record.stream;
  if (record.rounds > 0) fields.rounds = record.rounds;
  if (Object.keys(record.toolCalls).length > 0) fields.tool_calls = record.toolCalls;
  if (record.tokens) {
    fields.input_tokens = record.tokens.input;
    fields.cached_input_tokens = record.tokens.cachedInput;
    fields.output_tokens = record.tokens.output;
    fields.reasoning_tokens = record.tokens.reasoning;
  }
  if (record.upstreamStatus) fields.upstream_status = record.upstreamStatus;
  if (record.firstEventMs !== undefined) fields.first_event_ms = Math.round(record.firstEventMs * 10) / 10;
  if (record.errorCode) fields.error_code = record.errorCode;
  if (record.errorParam) fields.error_param = record.errorParam;
  if (record.errorDetail) fields.error_detail = record.errorDetail;
  if (owner) fields.owner = `owner:${owner.slice(0, 16)}`;
  const traceId = record.span?.spanContext().traceId;
  if (traceId) fields.trace_id = traceId;
  return fields;
}
