import type { Response } from 'express';
import type { Observable, Subscription } from 'rxjs';
import type { GatewayConfig } from '#config/gateway-config.js';
import type { ResponseStreamEvent } from '#core/loop/response-events.js';
import type { FlowGate } from '#core/protocol/flow-gate.js';
import { cancelWhenClientLeaves } from '../http/client-disconnect.js';
import { sendErrorEnvelope, toErrorEnvelope } from '../http/error-envelope.js';
import { SseWriter } from './sse-writer.js';

/**
 * Sends an event stream as SSE. An error before the first event is still a
 * plain HTTP error; after it, an `error` event ends the stream. The client
 * leaving unsubscribes, which is what cancels whatever the Observable runs.
 */
export function streamEvents(res: Response, events: Observable<ResponseStreamEvent>, server: GatewayConfig['server'], flow?: FlowGate): void {
  let subscription: Subscription | undefined;
  const sse = new SseWriter(res, server.keepAliveMs, server.sseWrites, flow);
  cancelWhenClientLeaves(res, () => subscription, sse);
  subscription = events.subscribe({
    next: (event) => sse.event(event.type, event),
    error: (err: unknown) => {
      if (!sse.headersSent) {
        sse.stop();
        sendErrorEnvelope(res, err);
        return;
      }
      const { body: envelope } = toErrorEnvelope(err);
      sse.event('error', { type: 'error', sequence_number: -1, error: { ...envelope.error } });
      sse.end();
    },
    complete: () => sse.end(),
  });
}
