import { SetMetadata, UseFilters, applyDecorators } from '@nestjs/common';
import { OpenAiExceptionFilter } from '../errors/openai-exception.filter.js';

/** Marks a controller as the gateway's own; the API-key guard checks only these. */
export const GATEWAY_ROUTES = Symbol('switchyard:gateway-routes');

/**
 * The gateway's own HTTP controllers: its errors become OpenAI envelopes
 * here, at the controller, and not app-wide, so that an application
 * embedding the gateway keeps its own errors, routes and RPC handlers.
 * `envelope: false` for a surface with its own error filter (Messages).
 */
export function GatewayRoutes(options: { envelope?: boolean } = {}): ClassDecorator {
  const marker = SetMetadata(GATEWAY_ROUTES, true);
  return options.envelope === false ? applyDecorators(marker) : applyDecorators(marker, UseFilters(OpenAiExceptionFilter));
}
