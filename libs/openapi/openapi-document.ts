import { RequestMethod } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { type JsonSchema, dtoSchema } from './dto-schema.js';
import { ROUTE_DOCS } from './route-docs.js';
import { SUCCESS_DOCS, errorSchemaOf, responseComponents } from './response-schemas.js';

/** One route as the router serves it: `POST`, `/v1/responses/:id`. */
export interface Route {
  method: string;
  path: string;
  /** The status `@HttpCode` gives the handler, when it does. */
  httpCode?: number;
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
      // A catch-all (`@All`) only answers errors for paths no operation has: not an operation of its own.
      if (paths === undefined || method === undefined || method === RequestMethod.ALL) continue;
      const httpCode = Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined;
      for (const prefix of prefixes) {
        for (const path of [paths].flat()) routes.push({ method: RequestMethod[method], path: joinPath(prefix, path), ...(httpCode ? { httpCode } : {}) });
      }
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
  const answer = SUCCESS_DOCS[`${route.method} ${route.path}`];
  const success: Record<string, unknown> = {};
  if (answer?.json) success['application/json'] = { schema: answer.json };
  for (const [type, schema] of Object.entries(answer?.other ?? {})) success[type] = { schema };
  // Nest's defaults: 201 for POST, 200 otherwise, unless the handler says (`@HttpCode`) or answers itself (`status`).
  const status = answer?.status ?? route.httpCode ?? (route.method === 'POST' ? 201 : 200);
  return {
    summary: doc?.summary ?? `${route.method} ${route.path}`,
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body } } } } : {}),
    responses: {
      [String(status)]: { description: 'Success', ...(Object.keys(success).length > 0 ? { content: success } : {}) },
      default: { description: 'An error, in the error envelope of its surface', content: { 'application/json': { schema: errorSchemaOf(route.path) } } },
    },
  };
}

/** The OpenAPI 3.1 document of these routes: paths from the router, bodies from the DTOs, answers from response-schemas.ts. */
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
    components: { schemas: { ErrorEnvelope: ERROR_ENVELOPE, ...responseComponents() } },
  };
}
