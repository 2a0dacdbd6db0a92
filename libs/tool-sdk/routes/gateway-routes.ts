import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Optional, SetMetadata, UseFilters, UseGuards, applyDecorators } from '@nestjs/common';
import { TextIntegrityGuard } from './text-integrity.guard.js';

/** Marks a controller as the gateway's own; the API-key guard checks only these. */
export const GATEWAY_ROUTES = Symbol('switchyard:gateway-routes');

/**
 * The filter that turns a gateway route's errors into answers: the gateway's
 * edge provides it (the OpenAI error envelope), so a tool module's routes
 * answer like the gateway's own without the SDK knowing any envelope.
 */
export const ROUTE_ERROR_FILTER = Symbol('switchyard:route-error-filter');

/**
 * Hands a gateway route's error to the edge's filter (`ROUTE_ERROR_FILTER`).
 * Outside the gateway module (a tool module tested on its own) there is no
 * edge: the error then goes on to the host's own handling.
 */
@Catch()
export class GatewayRouteErrors implements ExceptionFilter {
  constructor(@Optional() @Inject(ROUTE_ERROR_FILTER) private readonly edge?: ExceptionFilter) {}

  catch(exception: unknown, host: ArgumentsHost): unknown {
    if (!this.edge) throw exception;
    return this.edge.catch(exception, host);
  }
}

/**
 * The gateway's own HTTP controllers, and those of tool modules: their
 * errors become OpenAI envelopes here, at the controller, and not app-wide,
 * so that an application embedding the gateway keeps its own errors, routes
 * and RPC handlers. `envelope: false` for a surface with its own error
 * filter (Messages). Every one refuses unstorable text (NUL, lone
 * surrogates) in ids, query and body with a 400 (`TextIntegrityGuard`).
 */
export function GatewayRoutes(options: { envelope?: boolean } = {}): ClassDecorator {
  const marker = applyDecorators(SetMetadata(GATEWAY_ROUTES, true), UseGuards(new TextIntegrityGuard()));
  return options.envelope === false ? marker : applyDecorators(marker, UseFilters(GatewayRouteErrors));
}
