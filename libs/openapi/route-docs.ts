import { CreateResponseDto } from '#responses/request/create-response.dto.js';
import type { JsonSchema } from './dto-schema.js';

/** What the document says of one route beyond what the router knows: its summary and the DTO of its body. */
export interface RouteDoc {
  summary: string;
  /** The class-validator DTO that checks the body's scalar fields. */
  body?: Function;
  /** Fields the DTO leaves to their own parsers (polymorphic: items, tools), described here. */
  bodyExtras?: Record<string, JsonSchema>;
}

/**
 * The routes' words, keyed `METHOD /path` as the router has them. A route
 * missing here is still documented (the router lists it), with a generic summary.
 */
export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'POST /v1/responses': {
    summary: 'Create a response (JSON, or server-sent events with stream: true)',
    body: CreateResponseDto,
    bodyExtras: {
      input: { description: 'A string, or a list of input items (messages, tool calls and their outputs, item references).', type: ['string', 'array'] },
      tool_choice: { description: '"none", "auto", "required", or a tool to force.', type: ['string', 'object'] },
      conversation: { description: 'A conversation id, or { id }: the response is added to it.', type: ['string', 'object', 'null'] },
      prompt: { description: 'A stored prompt reference.', type: ['object', 'null'] },
    },
  },
  'GET /v1/responses/:id': { summary: 'Retrieve a stored response (SSE replay with stream=true)' },
  'DELETE /v1/responses/:id': { summary: 'Delete a stored response' },
  'POST /v1/responses/:id/cancel': { summary: 'Cancel a background response' },
  'GET /v1/responses/:id/input_items': { summary: "List a stored response's input items" },
  'POST /v1/responses/compact': { summary: 'Compact a transcript' },
  'POST /v1/responses/input_tokens': { summary: 'Count the input tokens of a request' },
  'GET /v1/models': { summary: 'List the upstream models' },
  'GET /health': { summary: 'Liveness' },
  'GET /ready': { summary: 'Readiness: the state store answers; the upstream is reported' },
  'GET /openapi.json': { summary: 'This document' },
};
