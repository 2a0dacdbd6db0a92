import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
  serviceName?: string;
}

function attributeValue(value: Record<string, unknown> | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  return JSON.stringify(value);
}

function attributes(list: Array<{ key: string; value: Record<string, unknown> }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, attributeValue(a.value)]));
}

/**
 * A real OTLP/HTTP trace receiver on loopback (JSON encoding, `POST
 * /v1/traces`), what a collector's otlphttp receiver is to the exporter.
 * It keeps every span it was sent, and the raw bodies for secret checks.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly rawBodies: string[] = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      this.rawBodies.push(body);
      try {
        const parsed = JSON.parse(body) as { resourceSpans?: any[] };
        for (const rs of parsed.resourceSpans ?? []) {
          const serviceName = attributes(rs.resource?.attributes)['service.name'] as string | undefined;
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              this.spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                attributes: attributes(s.attributes),
                status: s.status,
                serviceName,
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  /** Resolves once `predicate` holds over the spans received (polling; the exporter batches). */
  async waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.spans)) {
      if (Date.now() > deadline) throw new Error(`spans not received in time; have: ${this.spans.map((s) => s.name).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
