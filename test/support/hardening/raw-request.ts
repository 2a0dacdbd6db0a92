import http from 'node:http';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Any method to any path, exact bytes out, the whole answer back; rejects only on a broken connection or no answer in time. */
export function rawRequest(origin: string, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}, agent?: http.Agent): Promise<RawAnswer> {
  const target = new URL(origin);
  const payload = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : body;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path,
        method,
        agent: agent ?? false,
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length, ...headers } : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 15 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}
