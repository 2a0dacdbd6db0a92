import type { Response } from 'express';

/**
 * Calls back when a client goes away before its answer is complete.
 * `close` on the response (not the request, which closes once the body is
 * read) is the signal. The socket is destroyed too: a half-closed client
 * socket would otherwise linger until the response ended, holding the
 * server open. Returns what removes the listener.
 */
export function onClientGone(res: Response, callback: () => void): () => void {
  const listener = (): void => {
    if (res.writableFinished) return;
    callback();
    res.destroy();
  };
  res.on('close', listener);
  return () => res.off('close', listener);
}
