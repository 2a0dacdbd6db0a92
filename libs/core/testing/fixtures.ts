import { validateGatewayConfig } from '#config/config.loader.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { AnyGatewayExecutor, AnyToolHandler } from '#tool-sdk/contract/index.js';
import type { ModelEvent } from '../protocol/model-events.js';
import type { Usage } from '#tool-sdk/items.js';
import type { ResponseRequest } from '../loop/response-request.js';

/** A validated configuration: defaults plus `overrides`, exactly as the gateway builds it at boot. */
export function testConfig(overrides: Record<string, unknown> = {}): GatewayConfig {
  return validateGatewayConfig(overrides);
}

/** An explorer populated without DI, for tests of the stages that only read it. */
export function explorerWith(handlers: AnyToolHandler[], executors: AnyGatewayExecutor[] = []): ToolHandlerExplorer {
  return ToolHandlerExplorer.of({ handlers, executors });
}

/** A validated request as the HTTP layer would hand it to the loop. */
export function responseRequest(overrides: Partial<ResponseRequest> = {}): ResponseRequest {
  return {
    model: 'test-model',
    input: [{ type: 'message', role: 'user', content: 'hello' }],
    instructions: null,
    tools: [],
    toolChoice: 'auto',
    parallelToolCalls: true,
    temperature: null,
    topP: null,
    maxOutputTokens: null,
    maxToolCalls: null,
    text: { format: { type: 'text' } },
    reasoning: null,
    truncation: 'disabled',
    metadata: {},
    store: false,
    background: false,
    previousResponseId: null,
    conversationId: null,
    include: [],
    stream: false,
    promptCacheKey: null,
    safetyIdentifier: null,
    user: null,
    serviceTier: 'auto',
    topLogprobs: 0,
    presencePenalty: 0,
    frequencyPenalty: 0,
    owner: null,
    ...overrides,
  };
}

/** Model events of one assistant message, streamed in `pieces`. */
export function messageEvents(key: string, pieces: string[]): ModelEvent[] {
  return [{ type: 'message.start', key }, ...pieces.map((delta): ModelEvent => ({ type: 'message.delta', key, delta })), { type: 'message.done', key, text: pieces.join('') }];
}

/** Model events of one function call, its arguments streamed in `pieces`. */
export function callEvents(key: string, callId: string, name: string, pieces: string[]): ModelEvent[] {
  return [
    { type: 'call.start', key, call_id: callId, name },
    ...pieces.map((delta): ModelEvent => ({ type: 'call.delta', key, delta })),
    { type: 'call.done', key, call_id: callId, name, arguments: pieces.join('') },
  ];
}

export function usageEvent(input: number, output: number, reasoning = 0, cached = 0): ModelEvent {
  const usage: Usage = {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_tokens_details: { cached_tokens: cached },
    output_tokens_details: { reasoning_tokens: reasoning },
  };
  return { type: 'usage', usage };
}

export const finished: ModelEvent = { type: 'finish', status: 'completed' };
