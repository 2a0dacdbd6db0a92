import cluster from 'node:cluster';
import type { INestApplication } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { toAnthropicError } from '#messages/http/anthropic-error.js';
import { RequestTelemetry } from '#observability/context/request-telemetry.service.js';
import { requireJsonBody } from '#edge/request/json-content-type.js';
import { noteErrorForLog, toErrorEnvelope } from '#edge/errors/error-envelope.js';
import { OpenAiExceptionFilter } from '#edge/errors/openai-exception.filter.js';
import { hostileJsonShapeGuard } from '#responses/request/json-shape.scanner.js';
import { smallJsonBodyReader } from '#responses/request/small-json-body.js';
import { authenticateBeforeBody } from '#state/auth/authenticate-before-body.middleware.js';
import { ToolPreparationService } from '#core/registry/tool-preparation.service.js';
import { requestOwner } from '#tool-sdk/routes/request-owner.js';

/**
 * HTTP set-up every host needs: the request record (log line, metrics, span)
 * opened before the body is read, the JSON body parser with the configured
 * limit, a 415 for bodies not sent as JSON, and an error handler right behind
 * them so that malformed or oversized bodies get the OpenAI envelope (express
 * would answer with an HTML page). Create the app with `{ bodyParser: false }`
 * and call this before `listen`; `standalone: true` when the application is
 * nothing but the gateway.
 */
export function configureGatewayApp(app: INestApplication, options: { standalone?: boolean } = {}): INestApplication {
  const config = app.get<GatewayConfig>(GATEWAY_CONFIG);
  // Ahead of the parser, so that a body it refuses is still logged and counted.
  const telemetry = app.get(RequestTelemetry, { strict: false });
  app.use(telemetry.openMiddleware());
  // In worker mode, say which worker answered: one port hides several processes.
  const worker = cluster.isWorker ? String(cluster.worker?.id ?? '') : null;
  if (worker) {
    app.use((_req: Request, res: Response, next: NextFunction) => {
      res.setHeader('x-switchyard-worker', worker);
      next();
    });
  }
  // Keys are checked before the body is read, so that unauthenticated
  // callers cannot make the gateway parse megabytes for them.
  app.use(authenticateBeforeBody(app));
  // Too deep or too wide bodies are refused on their bytes, scanned as they arrive and before
  // parsing (see json-shape.scanner.ts). The scan must be mounted right before the parser.
  // A tool list the gateway already prepared is not parsed again: the parser is handed the kept one.
  const preparation = app.get(ToolPreparationService, { strict: false });
  const shapeGuard = hostileJsonShapeGuard(config.tools.maxToolsPerRequest, (err, req, res) => answerWithError(err, req as Request, res as Response), {
    list: (req, digest) => preparation.keptList(requestOwner(req as Request), digest),
    recent: (req) => preparation.recentLists(requestOwner(req as Request)),
  });
  app.use(shapeGuard.scanWhileReading);
  // The common body (small UTF-8 JSON, not compressed) is read here; express's parser takes the rest.
  app.use(smallJsonBodyReader(shapeGuard, { limit: config.server.bodyLimitBytes }));
  app.use(express.json({ limit: config.server.bodyLimitBytes, strict: false, verify: shapeGuard.verify }));
  app.use(shapeGuard.noteParsed);
  app.use(requireJsonBody());
  app.use(telemetry.enterMiddleware());
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!err) return next();
    if (res.headersSent) return res.end();
    answerWithError(err, req, res);
  });
  // A host that is only the gateway answers unknown routes in the envelope too; an
  // embedding app keeps Nest's behaviour for everything outside the gateway's controllers.
  if (options.standalone) app.useGlobalFilters(new OpenAiExceptionFilter());
  app.enableShutdownHooks();
  return app;
}

/** The answer to a request refused before routing, in the envelope of its surface. */
function answerWithError(err: unknown, req: Request, res: Response): void {
  // The Messages surface answers in Anthropic's envelope, even before routing.
  const { status, body } = req.path.startsWith('/v1/messages') ? toAnthropicError(err) : toErrorEnvelope(err);
  noteErrorForLog(res, err);
  res.status(status).json(body);
}
