import { toErrorEnvelope } from '../errors/error-envelope.js';

/**
 * An error as every surface answers it, for specs that state a failure's
 * status: the error's own fields (code, param, headers, upstreamStatus) with
 * the status and envelope type the edge gives its kind. Domain errors carry none themselves.
 */
export function answered(err: unknown): Record<string, unknown> {
  const e = err as Partial<Error> | null;
  const { status, body } = toErrorEnvelope(err);
  return { ...(err as object), name: e?.name, message: e?.message, status, type: body.error.type };
}

/** What a promise that must fail fails with, as answered: `await expect(answerOf(p)).resolves.toMatchObject({ status: 429 })`. */
export async function answerOf(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = await promise;
  } catch (err) {
    return answered(err);
  }
  throw new Error(`Expected a failure, got ${JSON.stringify(value)?.slice(0, 200)}`);
}
