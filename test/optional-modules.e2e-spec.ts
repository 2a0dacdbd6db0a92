import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { OtlpReceiver } from './support/otlp-receiver.js';
import { startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';
import { MODULE_RECORDER, readModuleRecord } from './support/process/module-record.js';

/** What each optional feature loads, and the gateway module that would load it. */
const OPTIONAL = {
  tracing: { packages: ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http'], loader: '/libs/observability/tracing/tracing.service' },
  oidc: { packages: ['jose'], loader: '/libs/state/auth/oidc.verifier' },
  kernel: { packages: ['@jupyterlab/services'], loader: '/libs/tools/code-interpreter/sandbox/kernel/jupyter-kernel' },
};

/** The module URLs and paths the gateway's main thread has loaded so far (the gateway carries on). */
async function loadedModules(gateway: GatewayProcess, record: string): Promise<string[]> {
  return (await readModuleRecord(gateway, record)).modules;
}

const loads = (modules: string[], pkg: string) => modules.some((u) => u.includes(`/node_modules/${pkg}/`));

/**
 * Tracing's SDK and exporter, OIDC's JWT library and the kernel backend's
 * Jupyter client load only in a gateway that uses them (issue 29: idle
 * memory per worker). Each is shown absent after plain traffic, while the
 * gateway module that would load it is there, then present once its feature
 * is used (jose as soon as OIDC is configured), so neither half passes on a
 * recorder that sees nothing.
 */
describe('optional features load their dependencies only when used', () => {
  let simulator: SimulatedUpstream;
  let upstreamUrl: string;
  let dir: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    ({ url: upstreamUrl } = await simulator.listen(0, '127.0.0.1'));
    dir = mkdtempSync(join(tmpdir(), 'switchyard-optional-'));
  });

  afterAll(async () => {
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(name: string, env: Record<string, string>) {
    const record = join(dir, `${name}.json`);
    const gateway = startGatewayProcess({
      UPSTREAM_URL: upstreamUrl,
      STORAGE_DRIVER: 'memory',
      CODE_INTERPRETER_BACKEND: 'kernel',
      SWITCHYARD_DATA_DIR: join(dir, name),
      NODE_OPTIONS: `--import ${MODULE_RECORDER}`,
      MODULE_RECORD: record,
      ...env,
    });
    return { gateway, record };
  }

  it('a gateway with none configured, after plain and function-tool requests, has loaded none of them', async () => {
    const { gateway: starting, record } = start('plain', {});
    const gateway = await starting;
    try {
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 30_000 });
      expect((await openai.responses.create({ model: 'm', input: 'Say hello.' })).status).toBe('completed');
      const call = await openai.responses.create({
        model: 'm',
        input: 'Weather? [[call get_weather {"city":"Oslo"}]]',
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
      });
      expect(call.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather' });
      const modules = await loadedModules(gateway, record);
      for (const [feature, { packages, loader }] of Object.entries(OPTIONAL)) {
        expect({ feature, loader: modules.some((u) => u.includes(loader)) }).toEqual({ feature, loader: true });
        expect({ feature, loaded: packages.filter((p) => loads(modules, p)) }).toEqual({ feature, loaded: [] });
      }
    } finally {
      await gateway.kill();
    }
  }, 60_000);

  it('tracing on and a code-interpreter call load the tracing SDK and the Jupyter client', async () => {
    const receiver = new OtlpReceiver();
    const tracesUrl = await receiver.listen();
    const { gateway: starting, record } = start('used', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: tracesUrl });
    const gateway = await starting;
    try {
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 90_000 });
      // Loaded before the server listened: tracing is on from the first request.
      const atStart = await loadedModules(gateway, record);
      expect(OPTIONAL.tracing.packages.filter((p) => loads(atStart, p))).toEqual(OPTIONAL.tracing.packages);
      expect(loads(atStart, '@jupyterlab/services')).toBe(false);
      const ran = await openai.responses.create({
        model: 'm',
        input: `Compute. [[call code_interpreter ${JSON.stringify({ code: 'x = 6 * 7\nprint(x)' })}]]`,
        tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
        include: ['code_interpreter_call.outputs'],
      });
      const item = ran.output.find((i) => i.type === 'code_interpreter_call') as any;
      expect(item).toMatchObject({ status: 'completed', outputs: [{ type: 'logs', logs: '42\n' }] });
      const afterCall = await loadedModules(gateway, record);
      expect(loads(afterCall, '@jupyterlab/services')).toBe(true);
      expect(loads(afterCall, 'jose')).toBe(false);
    } finally {
      await gateway.kill();
      await receiver.close();
    }
  }, 120_000);

  it('a gateway accepting OIDC tokens loads the JWT library, and checks its first bearer token with it', async () => {
    // Nothing listens at the key set's address: the token is refused as unverifiable (503), after the library loaded.
    const { gateway: starting, record } = start('oidc', { OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_JWKS_URI: 'http://127.0.0.1:9/jwks' });
    const gateway = await starting;
    try {
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ sub: 'u', exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: `${header}.${payload}.c2ln`, maxRetries: 0, timeout: 30_000 });
      await expect(openai.responses.create({ model: 'm', input: 'hi' })).rejects.toMatchObject({ status: 503 });
      expect(loads(await loadedModules(gateway, record), 'jose')).toBe(true);
    } finally {
      await gateway.kill();
    }
  }, 60_000);
});
