import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startGatewayProcess } from './support/process/gateway-process.js';
import { MODULE_RECORDER, readModuleRecord } from './support/process/module-record.js';

/** OpenTelemetry packages other than the API: with tracing off none of them has any work to do. */
const TRACING_SDK = [
  '@opentelemetry/core',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
  '@opentelemetry/otlp-exporter-base',
];
const sdkPackagesIn = (modules: string[]) => TRACING_SDK.filter((name) => modules.some((url) => url.includes(`/node_modules/${name}/`)));

/**
 * A gateway with tracing off loads nothing of OpenTelemetry but the API
 * (issue 53), even while it passes a client's traceparent on; with an OTLP
 * endpoint configured the SDK loads. Each case is a gateway process of its
 * own, asked once after its request.
 */
describe('the tracing SDK loads only when an OTLP endpoint is configured', () => {
  let simulator: SimulatedUpstream;
  let upstreamUrl: string;
  let dir: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    ({ url: upstreamUrl } = await simulator.listen(0, '127.0.0.1'));
    dir = mkdtempSync(join(tmpdir(), 'switchyard-tracing-lazy-'));
  });

  afterAll(async () => {
    await simulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function modulesAfterTracedRequest(name: string, env: Record<string, string>): Promise<string[]> {
    const record = join(dir, `${name}.modules.json`);
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', NODE_OPTIONS: `--import ${MODULE_RECORDER}`, MODULE_RECORD: record, ...env });
    try {
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 30_000 });
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const response = await openai.responses.create({ model: 'm', input: 'Say hello.' }, { headers: { traceparent } });
      expect(response.status).toBe('completed');
      return (await readModuleRecord(gateway, record, 'SIGUSR2')).modules;
    } finally {
      await gateway.kill();
    }
  }

  it('tracing off: only @opentelemetry/api is loaded, after a request carrying a traceparent', async () => {
    const modules = await modulesAfterTracedRequest('off', {});
    // The recorder sees the tracing service itself, so an empty list cannot pass for a clean one.
    expect(modules.some((u) => u.includes('/libs/observability/tracing/tracing.service'))).toBe(true);
    expect(modules.some((u) => u.includes('/node_modules/@opentelemetry/api/'))).toBe(true);
    expect(sdkPackagesIn(modules)).toEqual([]);
  }, 60_000);

  it('tracing on: the SDK, the exporter and @opentelemetry/core are loaded', async () => {
    // Nothing listens on port 9 of the loopback: spans are dropped, the request is unaffected.
    const modules = await modulesAfterTracedRequest('on', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(sdkPackagesIn(modules)).toEqual(TRACING_SDK);
  }, 60_000);
});
