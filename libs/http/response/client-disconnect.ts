import type { Response } from 'express';
import type { Subscription } from 'rxjs';
import type { SseWriter } from '../sse/sse-writer.js';

/**
 * Ends a run when its client goes away. `close` on the response (not the
 * request, which closes once the body is read) is the signal; unsubscribing
 * aborts the upstream request and in-flight tool calls. The socket is
 * destroyed too: a half-closed client socket would otherwise linger until
 * the response ended, holding the server open.
 */
export function cancelWhenClientLeaves(res: Response, subscription: () => Subscription | undefined, sse?: SseWriter): void {
  res.on('close', () => {
    if (res.writableFinished) return;
    subscription()?.unsubscribe();
    sse?.stop();
    res.destroy();
  });
}
