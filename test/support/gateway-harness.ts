import 'reflect-metadata';
import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import OpenAI from 'openai';
import { SimulatedUpstream, type SimulatedUpstreamOptions } from '../../apps/simulator/src/simulated-upstream.js';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import type { GatewayConfig } from '#config/gateway-config.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { GatewayModule } from '#src/gateway.module.js';

export interface GatewayStack {
  app: INestApplication;
  config: GatewayConfig;
  /** Gateway base URL including `/v1`. */
  url: string;
  /** The simulated upstream (a stand-in for vLLM). */
  simulator: SimulatedUpstream;
  openai: OpenAI;
  close(): Promise<void>;
}

export interface StackOptions {
  dialect?: 'responses' | 'chat';
  simulator?: SimulatedUpstreamOptions;
  /** Config overrides (deep-merged over the test defaults). */
  config?: Record<string, any>;
  imports?: Array<Type | DynamicModule>;
  toolModules?: Array<Type | DynamicModule>;
  /** Point the gateway somewhere other than the simulator. */
  upstreamUrl?: string;
}

function deepMerge(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? deepMerge(a[k], v) : v;
  }
  return out;
}

/** The simulated upstream and a gateway in front of it, both on real loopback sockets. */
export async function startStack(options: StackOptions = {}): Promise<GatewayStack> {
  const simulator = new SimulatedUpstream(options.simulator ?? {});
  const { url: simulatorUrl } = await simulator.listen(0, '127.0.0.1');
  let config: GatewayConfig;
  let app: INestApplication;
  try {
    config = validateGatewayConfig(
      deepMerge(
        {
          upstream: { baseUrl: options.upstreamUrl ?? simulatorUrl, dialect: options.dialect ?? 'responses' },
          server: { host: '127.0.0.1', port: 0 },
          storage: { driver: 'memory' },
          // Suites that check the request log turn it back on; the others keep the test output readable.
          observability: { requestLog: false },
        },
        options.config ?? {},
      ),
    );
    app = await NestFactory.create(GatewayModule.forRoot({ config, imports: options.imports, toolModules: options.toolModules }), gatewayHttpAdapter(), {
      bodyParser: false,
      logger: false,
    });
    // The harness stands for the deployable gateway, which owns the whole app.
    configureGatewayApp(app, { standalone: true });
    await app.listen(0, '127.0.0.1');
  } catch (err) {
    // A stack that does not start leaves no simulator listening: it would keep the test worker from exiting.
    await simulator.close();
    throw err;
  }
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}/v1`;
  const openai = new OpenAI({ baseURL: url, apiKey: 'sk-test', maxRetries: 0, timeout: 20_000 });
  return {
    app,
    config,
    url,
    simulator,
    openai,
    async close() {
      // Clients may hold pre-opened sockets that never carry a request; they
      // would keep the server open until the client's own idle timeout.
      const closing = app.close();
      (app.getHttpServer() as import('node:http').Server).closeAllConnections();
      await closing;
      await simulator.close();
    },
  };
}

/** Reads a raw SSE body into parsed events (for tests that check the wire, not the SDK's view). */
export function parseSse(text: string): Array<{ event: string | null; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim().length > 0 && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? null;
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}
