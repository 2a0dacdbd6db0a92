import type { NextFunction, Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { ObservabilityConfig } from '../config/observability.config-section.js';
import { DrainState } from '../lifecycle/drain-state.service.js';
import { LogWriter } from '../logging/log-writer.service.js';
import { RequestLog } from '../logging/request-log.service.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.service.js';
import { TracingService } from '../tracing/tracing.service.js';
import { recordOf, requestContext } from './request-record.js';
import { RequestTelemetry } from './request-telemetry.service.js';

/** The two middlewares over a bare request and response, with tracing on or off. */
async function served(tracingOn: boolean): Promise<{ store: unknown; record: unknown }> {
  const settings = Object.assign(new ObservabilityConfig(), { logFormat: 'json' as const, ...(tracingOn ? { otlpTracesUrl: 'http://127.0.0.1:9/v1/traces' } : {}) });
  const writer = new LogWriter(settings, { write: () => undefined });
  const tracing = new TracingService(settings);
  await tracing.onModuleInit();
  const telemetry = new RequestTelemetry(new GatewayMetrics(settings), tracing, new RequestLog(writer, tracing, settings), new DrainState());
  const req = Object.assign(new EventEmitter(), { method: 'POST', path: '/v1/responses', headers: {} }) as unknown as Request;
  const res = Object.assign(new EventEmitter(), { setHeader: () => undefined, locals: {} }) as unknown as Response;
  try {
    return await new Promise((resolve) => {
      telemetry.openMiddleware()(req, res, (() =>
        telemetry.enterMiddleware()(req, res, (async () => {
          // What code running for the request sees after an await, as a store call does.
          await Promise.resolve();
          resolve({ store: requestContext.getStore(), record: recordOf(req) });
        }) as NextFunction)) as NextFunction);
    });
  } finally {
    await tracing.onApplicationShutdown();
  }
}

describe('RequestTelemetry', () => {
  it('enters no async context with tracing off: the record is found through the request', async () => {
    const { store, record } = await served(false);
    expect(record).toBeDefined();
    expect(store).toBeUndefined();
  });

  it('makes the record the async context with tracing on, so store spans find their parent', async () => {
    const { store, record } = await served(true);
    expect(record).toBeDefined();
    expect(store).toBe(record);
  });

  it('counts interactive model requests while they are open, and tells listeners when the last one ends', async () => {
    const settings = Object.assign(new ObservabilityConfig(), { logFormat: 'json' as const });
    const writer = new LogWriter(settings, { write: () => undefined });
    const tracing = new TracingService(settings);
    const telemetry = new RequestTelemetry(new GatewayMetrics(settings), tracing, new RequestLog(writer, tracing, settings), new DrainState());
    const open = (method: string, path: string) => {
      const req = Object.assign(new EventEmitter(), { method, path, headers: {} }) as unknown as Request;
      const res = Object.assign(new EventEmitter(), { setHeader: () => undefined, locals: {}, statusCode: 200, writableFinished: true }) as unknown as Response;
      telemetry.openMiddleware()(req, res, (() => undefined) as NextFunction);
      return res;
    };
    const idle: number[] = [];
    const stop = telemetry.onInteractiveIdle(() => idle.push(telemetry.interactiveInFlight));
    const chat = open('POST', '/v1/chat/completions');
    const responses = open('POST', '/v1/responses');
    // Polling a batch or listing files is not a client waiting on a model.
    const poll = open('GET', '/v1/batches/batch_x');
    expect(telemetry.interactiveInFlight).toBe(2);
    poll.emit('finish');
    chat.emit('finish');
    expect(idle).toEqual([]);
    responses.emit('finish');
    expect(idle).toEqual([0]);
    expect(telemetry.lastInteractiveEndedAt).toBeGreaterThan(0);
    stop();
    open('POST', '/v1/embeddings').emit('finish');
    expect(idle).toEqual([0]);
  });
});
