import { estimateItemTokens } from './model-context.service.js';
import type { AdmissionCost } from './request-limiter.interface.js';
import type { ResponseRequest } from './response-request.js';

/**
 * What a request will cost as far as it is known before its first upstream
 * call, for the owner's token budgets: its own prompt at the gateway's token
 * estimate (the one the output budget is fitted with, three UTF-8 bytes a
 * token: high on purpose) plus its output bound. Prior turns it continues
 * (`previous_response_id`, `conversation`) are not loaded yet and a request
 * without `max_output_tokens` has no known output cost: both are charged when
 * the run ends, from the upstream's `usage`, which replaces this estimate.
 * The output bound is the one the client asked for, before the loop fits it
 * to the model's context.
 */
export function admissionCost(request: Pick<ResponseRequest, 'instructions' | 'input' | 'tools' | 'maxOutputTokens'>): AdmissionCost {
  let prompt = Math.ceil(Buffer.byteLength(request.instructions ?? '', 'utf8') / 3);
  if (request.input.length > 0) prompt += estimateItemTokens(request.input);
  if (request.tools.length > 0) prompt += estimateItemTokens(request.tools);
  return { prompt, output: request.maxOutputTokens ?? 0 };
}
