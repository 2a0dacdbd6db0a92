import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { type JsonSchema, dtoSchema } from './dto-schema.js';
import { ROUTE_DOCS } from './route-docs.js';

/** One route as the router serves it: `POST`, `/v1/responses/:id`. */
export interface Route {
  method: string;
  path: string;
}

function joinPath(...parts: Array<string | undefined>): string {
  const joined = parts
    .flatMap((p) => (p ?? '').split('/'))
    .filter(Boolean)
    .join('/');
  return `/${joined}`;
}

/** Every route of the app's controllers, read from their decorators' metadata (what Nest's router maps). */
export function routesOf(discovery: DiscoveryService, scanner: MetadataScanner): Route[] {
  const routes: Route[] = [];
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as Function | undefined;
    if (!controller?.prototype) continue;
    const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined].flat();
    for (const name of scanner.getAllMethodNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, unknown>)[name] as Function;
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (paths === undefined || method === undefined) continue;
      for (const prefix of prefixes) for (const path of [paths].flat()) routes.push({ method: RequestMethod[method], path: joinPath(prefix, path) });
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/** The OpenAI error envelope every route answers a failure with. */
const ERROR_ENVELOPE: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: ['string', 'null'] } },
    },
  },
};

function operation(route: Route): Record<string, unknown> {
  const doc = ROUTE_DOCS[`${route.method} ${route.path}`];
  const parameters = [...route.path.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const body = doc?.body ? dtoSchema(doc.body) : undefined;
  if (body && doc?.bodyExtras) body.properties = { ...(body.properties as object), ...doc.bodyExtras };
  const success: Record<string, unknown> = { 'application/json': { schema: { type: 'object' } } };
  if (doc?.streams) success['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events, one JSON event per data line.' } };
  return {
    summary: doc?.summary ?? `${route.method} ${route.path}`,
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: {
      '200': { description: 'Success', content: success },
      default: { description: 'An error, in the OpenAI error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
    },
  };
}

/** The OpenAPI 3.1 document of these routes: paths from the router, bodies from the DTOs. */
export function openApiDocument(routes: readonly Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard gateway', version, description: 'The OpenAI Responses API (and the Anthropic Messages API) in front of a self-hosted model server.' },
    paths,
    components: { schemas: { ErrorEnvelope: ERROR_ENVELOPE } },
  };
}
