import http from 'node:http';
import { childConfig, serveParent } from './lib/child-endpoint.js';

/**
 * The floor for one extra hop in Node: a reverse proxy on `node:http` that
 * pipes the request to the upstream and the answer back, byte for byte, over
 * a keep-alive agent. No parsing, no validation. The gateway's throughput is
 * judged against this.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
  return out;
}

async function main(): Promise<void> {
  const { upstreamUrl } = childConfig<{ upstreamUrl: string }>();
  const upstream = new URL(upstreamUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2048, scheduling: 'lifo' });
  const server = http.createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: endToEnd(req.headers), agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
    });
    out.on('error', () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end();
    });
    // The client went away: stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  serveParent(`http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, '')}`, {}, async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    agent.destroy();
  });
}

main().catch((err: unknown) => {
  console.error('pass-through proxy failed to start:', err);
  process.exit(1);
});
