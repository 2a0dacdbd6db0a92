import { ServerConnection } from '@jupyterlab/services';
import WebSocket from 'ws';
import type { JupyterEndpoint } from './jupyter-host.js';

/**
 * The client settings for @jupyterlab/services on Node: `ws` as the
 * WebSocket (with a bound on what one message may carry, since a kernel's
 * messages are the tenant's), Node's own fetch.
 */
export function clientSettings(endpoint: JupyterEndpoint, maxMessageBytes: number): ServerConnection.ISettings {
  const url = endpoint.url.replace(/\/?$/, '/');
  class BoundedWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, { maxPayload: maxMessageBytes, headers: { Authorization: `token ${endpoint.token}` } });
    }
  }
  return ServerConnection.makeSettings({
    baseUrl: url,
    wsUrl: url.replace(/^http/, 'ws'),
    token: endpoint.token,
    appendToken: false,
    WebSocket: BoundedWebSocket as unknown as typeof globalThis.WebSocket,
    fetch: globalThis.fetch,
    Request: globalThis.Request,
    Headers: globalThis.Headers,
  });
}
