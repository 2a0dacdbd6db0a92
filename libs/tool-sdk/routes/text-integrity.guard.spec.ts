import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { SCANNED_BODY, type ScannedBody } from './scanned-body.js';
import { TextIntegrityGuard } from './text-integrity.guard.js';

/** The guard over an HTTP request as express leaves it: params, query, body and what the body reader noted. */
function check(req: { params?: object; query?: object; body?: unknown; [SCANNED_BODY]?: ScannedBody }): unknown {
  try {
    new TextIntegrityGuard().canActivate(new ExecutionContextHost([req, {}, () => undefined]));
    return 'passed';
  } catch (err) {
    return (err as { param?: string }).param;
  }
}

describe('TextIntegrityGuard', () => {
  it('walks a body the reader did not vouch for, and skips only the body it vouched for', () => {
    const body = { input: 'x\u0000' };
    expect(check({ body })).toBe('input');
    // Bytes with a risky escape: the reader does not vouch, the walk finds it.
    expect(check({ body, [SCANNED_BODY]: { body, storableText: false } })).toBe('input');
    // Vouched for by its bytes (a value only a test can make disagree with them): not walked.
    expect(check({ body, [SCANNED_BODY]: { body, storableText: true } })).toBe('passed');
    // The note is about another body (req.body replaced since): the current one is walked.
    expect(check({ body, [SCANNED_BODY]: { body: { input: 'clean' }, storableText: true } })).toBe('input');
  });

  it('checks path ids and the query whatever the body reader noted', () => {
    const body = { input: 'clean' };
    const vouched = { [SCANNED_BODY]: { body, storableText: true } };
    expect(check({ params: { id: 'resp_\ud800' }, body, ...vouched })).toBe('id');
    expect(check({ query: { after: 'a\u0000' }, body, ...vouched })).toBe('after');
  });
});
