import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { RequestTelemetry } from '../context/request-telemetry.service.js';
import { DrainState } from './drain-state.service.js';

/**
 * Graceful drain for a host that owns its process (`apps/gateway`): when the
 * app closes (SIGTERM through Nest's shutdown hooks), stop accepting
 * connections, turn `/ready` to 503, and let requests in progress (streams
 * included) finish for up to `graceMs` before their sockets are closed.
 *
 * It runs in the HTTP adapter's `beforeClose`, the first step of Nest's
 * shutdown, because the later module hooks already tear down what open
 * requests still use (MCP connections, the store).
 */
export function installGracefulDrain(app: INestApplication, graceMs: number, onDrain?: (inFlight: number) => void): void {
  const adapter = app.getHttpAdapter() as unknown as { beforeClose?: () => unknown };
  const telemetry = app.get(RequestTelemetry);
  const state = app.get(DrainState);
  const server = app.getHttpServer() as Server;
  const original = adapter.beforeClose?.bind(adapter);
  adapter.beforeClose = async () => {
    // A start-up that failed before listening has nothing to drain.
    if (!server.listening) return original?.();
    state.draining = true;
    onDrain?.(telemetry.inFlight);
    // No new connections; idle keep-alive sockets go now, busy ones after their answer.
    server.close();
    server.closeIdleConnections();
    const ac = new AbortController();
    await Promise.race([telemetry.idle(), sleep(graceMs, undefined, { signal: ac.signal }).catch(() => undefined)]);
    ac.abort();
    // Past the deadline: whatever is still open is cut, which cancels its run.
    server.closeAllConnections();
    await original?.();
  };
}
