import type { InferOptions, ModelEvent, ModelRequest, UpstreamClient } from 'switchyard-gateway';
import type { Observable } from 'rxjs';

/**
 * Wraps the configured upstream client and adds a header to every model
 * call, per request: here the tenant, derived from the request's owner (an
 * API key's identity) and id. The wrapped client does the HTTP.
 */
export class TenantHeaderUpstreamClient implements UpstreamClient {
  constructor(
    private readonly inner: UpstreamClient,
    private readonly tenant: string,
  ) {}

  get dialect(): UpstreamClient['dialect'] {
    return this.inner.dialect;
  }

  infer(request: ModelRequest, options: InferOptions = {}): Observable<ModelEvent> {
    const context = options.context ?? { owner: null, requestId: 'unknown', headers: {} };
    const headers = { ...context.headers, 'x-example-tenant': this.tenant, 'x-example-request': context.requestId };
    return this.inner.infer(request, { ...options, context: { ...context, headers } });
  }

  listModels(signal?: AbortSignal) {
    return this.inner.listModels(signal);
  }

  probe(signal?: AbortSignal) {
    return this.inner.probe(signal);
  }

  /** The wrapped client owns the sockets. */
  close(): void {
    (this.inner as Partial<{ close(): void }>).close?.();
  }
}
