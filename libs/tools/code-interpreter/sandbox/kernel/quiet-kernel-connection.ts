import { type Kernel, KernelConnection } from '@jupyterlab/services';

/** Makes `console.debug` a no-op; the function returned puts it back. */
function muteDebug(): () => void {
  const debug = console.debug;
  console.debug = () => undefined;
  return () => {
    console.debug = debug;
  };
}

function withoutDebug<T>(fn: () => T): T {
  const restore = muteDebug();
  try {
    return fn();
  } finally {
    restore();
  }
}

/**
 * A kernel connection that keeps @jupyterlab/services' browser-console
 * chatter ("Starting WebSocket: ws://…" for each socket it opens, "Kernel:
 * dead (…)" for a status change) out of the gateway's output. The library
 * writes those with `console.debug` directly and has no logger to configure,
 * so the two places that write them, opening a socket (in the constructor
 * and on each reconnect) and taking a new status, run with `console.debug`
 * muted. Both are synchronous, so nothing else can log in that window: only
 * the library's own lines are dropped, and its warnings and errors still go
 * through.
 */
export class QuietKernelConnection extends KernelConnection {
  constructor(options: Kernel.IKernelConnection.IOptions) {
    const restore = muteDebug();
    try {
      super(options);
    } finally {
      restore();
    }
    // Private to the library (hence the cast): an instance property called by the reconnect timer, and a prototype method.
    const self = this as unknown as { _createSocket: (...args: unknown[]) => void; _updateStatus: (status: Kernel.Status) => void };
    const createSocket = self._createSocket;
    self._createSocket = (...args) => withoutDebug(() => createSocket(...args));
    const updateStatus = self._updateStatus.bind(this);
    self._updateStatus = (status) => withoutDebug(() => updateStatus(status));
  }
}
