import type { Observable } from 'rxjs';

/**
 * What a broker request runs inside, supplied by observability: over HTTP the
 * request's record is entered by a middleware, so store calls made on its
 * behalf find their parent span; a broker request has no middleware, so the
 * RPC controller asks this port to do the same around its run.
 */
export interface RpcRunContext {
  around<T>(pattern: string, run: Observable<T>): Observable<T>;
}

/** Nest token of the `RpcRunContext` (optional: without it a broker run has no async context). */
export const RPC_RUN_CONTEXT = Symbol.for('switchyard.RpcRunContext');
