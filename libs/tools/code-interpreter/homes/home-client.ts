import { UnavailableError } from '#tool-sdk/index.js';
import { decodeFrame, encodeFrame, type ContainerOperation, type OperationFailure } from './container-operation.js';

export const INTERNAL_SECRET_HEADER = 'x-switchyard-internal';
export const OPERATION_PATH = '/internal/container-operation';

/** The home did not answer at all (connection refused or reset): it may be gone. */
export class HomeUnreachableError extends Error {}

/** The home answered with a failure it names. */
export class OperationFailedError extends Error {
  constructor(
    readonly failure: OperationFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends one container operation to the process at `url` and returns its
 * result. Cancelling `signal` (the client went away) aborts the forwarded
 * request, which cancels the operation on the home.
 */
export async function forwardOperation<R>(url: string, secret: string, op: ContainerOperation, signal?: AbortSignal): Promise<R> {
  let res: Response;
  try {
    res = await fetch(`${url}${OPERATION_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', [INTERNAL_SECRET_HEADER]: secret },
      body: encodeFrame(op as unknown as Record<string, unknown>),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new HomeUnreachableError(`the process holding the container did not answer at ${url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status === 401) {
    // The deployment's fault, not the client's: a 503 naming the setting, never a bare 500.
    throw new UnavailableError(
      'Another gateway process refused the internal credential: give every replica the same codeInterpreter.internal.secret (SWITCHYARD_INTERNAL_SECRET).',
      'internal_credential_refused',
    );
  }
  const answer = decodeFrame<{ ok?: boolean; result?: R; data?: Uint8Array; failure?: OperationFailure; message?: string }>(body);
  if (!answer.ok) throw new OperationFailedError(answer.failure ?? 'invalid', answer.message ?? 'the operation failed');
  return (answer.data !== undefined ? { ...(answer.result as object), data: answer.data } : answer.result) as R;
}
