import type { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GatewayModule, configureGatewayApp, gatewayHttpAdapter } from '#src/index.js';
import { SimulatedUpstream, type SimulatedUpstreamOptions } from '../../simulator/src/simulated-upstream.js';

export interface ToolTestGatewayOptions {
  /** The tool-type modules under test (a plugin's `toolModules`). */
  toolModules: Array<Type | DynamicModule>;
  /** Settings over the harness's own (memory storage, the simulated upstream), as `GatewayModule.forRoot({ config })` takes them. */
  config?: Record<string, unknown>;
  /** Options of the simulated upstream (latency, reasoning items, a fault on every request). */
  upstream?: SimulatedUpstreamOptions;
}

/** One event of a streamed response, as the client reads it. */
export interface StreamedEvent {
  type: string;
  sequence_number?: number;
  [field: string]: unknown;
}

/**
 * A whole gateway around the tool modules under test, on a real socket, in
 * front of the simulated upstream: a request goes through the same HTTP
 * edge, loop, scheduler and storage as in production, and only the model is
 * simulated. The simulated model calls a tool when the input says
 * `[[call <function name> {"arg": ...}]]`, and answers with the call's
 * output in the next round. `close()` stops both servers.
 */
export class ToolTestGateway {
  private constructor(
    private readonly app: INestApplication,
    /** The simulated upstream (not a real model): its `requests` show what the model was sent. */
    readonly upstream: SimulatedUpstream,
    /** The gateway's base URL, ending in `/v1`, for an OpenAI client's `baseURL`. */
    readonly baseUrl: string,
  ) {}

  static async start(options: ToolTestGatewayOptions): Promise<ToolTestGateway> {
    const upstream = new SimulatedUpstream(options.upstream);
    const { url } = await upstream.listen(0, '127.0.0.1');
    try {
      // Memory storage and no per-request log lines: a test's output is its own.
      const own = options.config ?? {};
      const config = {
        ...own,
        upstream: { baseUrl: url, ...(own.upstream as object) },
        storage: { driver: 'memory', ...(own.storage as object) },
        observability: { requestLog: false, ...(own.observability as object) },
      };
      const app = await NestFactory.create(GatewayModule.forRoot({ config, imports: options.toolModules }), gatewayHttpAdapter(), { bodyParser: false, logger: ['error'] });
      configureGatewayApp(app);
      await app.listen(0, '127.0.0.1');
      const { port } = app.getHttpServer().address() as { port: number };
      return new ToolTestGateway(app, upstream, `http://127.0.0.1:${port}/v1`);
    } catch (err) {
      await upstream.close();
      throw err;
    }
  }

  /** `POST /v1/responses` without streaming: the response object, or the error envelope with its status. */
  async create(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }> {
    const res = await this.post({ model: 'switchyard-sim', ...body, stream: false });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  /** `POST /v1/responses` with `stream: true`: every event, in the order the client received them. */
  async stream(body: Record<string, unknown>): Promise<StreamedEvent[]> {
    const res = await this.post({ model: 'switchyard-sim', ...body, stream: true });
    const text = await res.text();
    if (!res.ok) throw new Error(`the gateway answered ${res.status}: ${text}`);
    return text
      .split(/\r?\n\r?\n/)
      .map((block) =>
        block
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n'),
      )
      .filter((data) => data.length > 0 && data !== '[DONE]')
      .map((data) => JSON.parse(data) as StreamedEvent);
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.upstream.close();
  }

  private post(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${this.baseUrl}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }
}
