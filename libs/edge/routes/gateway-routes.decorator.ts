import { SetMetadata, UseFilters, UseGuards, applyDecorators } from '@nestjs/common';
import { OpenAiExceptionFilter } from '../errors/openai-exception.filter.js';
import { TextIntegrityGuard } from '../request/text-integrity.guard.js';

/** Marks a controller as the gateway's own; the API-key guard checks only these. */
export const GATEWAY_ROUTES = Symbol('switchyard:gateway-routes');

/**
 * The gateway's own HTTP controllers: its errors become OpenAI envelopes
 * here, at the controller, and not app-wide, so that an application
 * embedding the gateway keeps its own errors, routes and RPC handlers.
 * `envelope: false` for a surface with its own error filter (Messages).
 * Every one refuses unstorable text (NUL, lone surrogates) in ids, query
 * and body with a 400 (`TextIntegrityGuard`).
 */
export function GatewayRoutes(options: { envelope?: boolean } = {}): ClassDecorator {
  const marker = applyDecorators(SetMetadata(GATEWAY_ROUTES, true), UseGuards(new TextIntegrityGuard()));
  return options.envelope === false ? marker : applyDecorators(marker, UseFilters(OpenAiExceptionFilter));
}
