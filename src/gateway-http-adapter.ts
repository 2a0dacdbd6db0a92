import http from 'node:http';
import https from 'node:https';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Application } from 'express';

/** An express app with its request and response prototypes, which `express()` sets and its types leave out. */
type ExpressApp = Application & { request: object; response: object };

/**
 * Nest's express adapter, with one difference: the HTTP server makes each
 * request and response with express's prototypes from the start.
 *
 * Why: express gives every request and response its prototypes
 * (`app.request`, `app.response`) with `Object.setPrototypeOf` as it arrives,
 * and V8 then gives each of them a hidden class of its own. A request and its
 * response carried about 2 KB of private shape for as long as they were open,
 * and every property access that met them, in express, Nest and the gateway,
 * met a new hidden class per request. Here the server makes them as
 * instances of two subclasses of Node's `IncomingMessage` and `ServerResponse`
 * whose prototypes then lead to express's, and those prototypes become the
 * app's `request` and `response`: express's own `setPrototypeOf` finds the
 * prototype already in place and changes nothing, and all requests share
 * their hidden classes, as they do under plain Node.
 *
 * The objects are still Node's, built by Node's constructors, and still have
 * every express method. With `return503OnClosing` or `forceCloseConnections`
 * the server is Nest's own.
 */
export class GatewayExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.return503OnClosing || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<ExpressApp>();
    const classes = expressMadeClasses(app);
    this.httpServer = options?.httpsOptions ? https.createServer({ ...options.httpsOptions, ...classes }, app) : http.createServer(classes, app);
  }
}

/** Node's two HTTP classes, subclassed so that their instances have `app`'s request and response prototypes. */
function expressMadeClasses(app: ExpressApp): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  class GatewayRequest extends http.IncomingMessage {}
  class GatewayResponse extends http.ServerResponse {}
  Object.setPrototypeOf(GatewayRequest.prototype, app.request);
  Object.setPrototypeOf(GatewayResponse.prototype, app.response);
  app.request = GatewayRequest.prototype;
  app.response = GatewayResponse.prototype;
  return { IncomingMessage: GatewayRequest, ServerResponse: GatewayResponse as typeof http.ServerResponse };
}

/** A new adapter for `NestFactory.create(module, gatewayHttpAdapter(), options)`. */
export function gatewayHttpAdapter(): GatewayExpressAdapter {
  return new GatewayExpressAdapter();
}
