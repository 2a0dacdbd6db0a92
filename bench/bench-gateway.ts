import 'reflect-metadata';
import { Global, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createWriteStream } from 'node:fs';
import type { Server } from 'node:http';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { gatewayHttpAdapter } from '#src/gateway-http-adapter.js';
import { GatewayModule } from '#src/gateway.module.js';
import { childConfig, serveParent } from './lib/child-endpoint.js';
import { NapToolModule, napLedger } from '#core/testing/nap-tool.module.js';
import { LOG_SINK } from '#observability/logging/log-writer.service.js';

/**
 * The gateway as the benchmark runs it, in its own process: the built-in
 * tool modules plus the `nap` tool (libs/core/testing), no state module (nothing is
 * stored), request log off (metrics on), on 127.0.0.1 and an ephemeral port.
 */
export interface BenchGatewayConfig {
  upstreamUrl: string;
  /** `tools.maxConcurrentGatewayCalls`. */
  window?: number;
  /** Upstream keep-alive sockets; the memory run needs one per open stream. */
  maxSockets?: number;
  idleMs?: number;
  /** `server.sseWrites`: one write per event (default) or per tick. */
  sseWrites?: 'event' | 'tick';
  /** A file to receive the request log (one JSON line per request); without it the request log is off. */
  requestLogFile?: string;
  /** A SQLite file to store responses in (the scale bench's store on/off runs); memory otherwise. */
  sqlitePath?: string;
  /** `mcp` config section (the scale bench's MCP tool rounds: `allowedHosts`, `servers`). */
  mcp?: Record<string, unknown>;
  /** `upstream.dialect`; default `responses`. */
  dialect?: 'responses' | 'chat';
  /** Further config sections, merged over the above one level deep (`{observability: {metrics: false}}`): what-if runs. */
  sections?: Record<string, Record<string, unknown>>;
}

/** The request log's lines appended to a file: what a container runtime does with stdout. */
@Global()
@Module({})
class FileLogModule {
  static to(path: string) {
    const stream = createWriteStream(path, { flags: 'a' });
    return { module: FileLogModule, providers: [{ provide: LOG_SINK, useValue: { isTTY: false, write: (line: string) => stream.write(line) } }], exports: [LOG_SINK] };
  }
}

async function main(): Promise<void> {
  const options = childConfig<BenchGatewayConfig>();
  const sections: Record<string, Record<string, unknown>> = {
    upstream: { baseUrl: options.upstreamUrl, dialect: options.dialect ?? 'responses', maxSockets: options.maxSockets ?? 256 },
    server: { host: '127.0.0.1', port: 0, sseWrites: options.sseWrites ?? 'event' },
    storage: options.sqlitePath ? { driver: 'sqlite', sqlitePath: options.sqlitePath } : { driver: 'memory' },
    tools: { maxConcurrentGatewayCalls: options.window ?? 5 },
    ...(options.mcp ? { mcp: options.mcp } : {}),
    timeouts: { idleMs: options.idleMs ?? 60_000 },
    // Off unless asked for (it would write to this child's stdout, the report's); metrics stay on.
    observability: { requestLog: options.requestLogFile !== undefined },
  };
  for (const [name, section] of Object.entries(options.sections ?? {})) sections[name] = { ...sections[name], ...section };
  const config = validateGatewayConfig(sections);
  const app = await NestFactory.create(
    GatewayModule.forRoot({ config, imports: [NapToolModule, ...(options.requestLogFile ? [FileLogModule.to(options.requestLogFile)] : [])] }),
    gatewayHttpAdapter(),
    {
      bodyParser: false,
      logger: false,
    },
  );
  configureGatewayApp(app, { standalone: true });
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const { port } = server.address() as { port: number };
  serveParent(
    `http://127.0.0.1:${port}/v1`,
    {
      ledger: () => napLedger.records,
      'ledger-reset': () => {
        napLedger.reset();
        return true;
      },
      connections: () => new Promise((resolve) => server.getConnections((_e, n) => resolve(n))),
    },
    async () => {
      const closing = app.close();
      server.closeAllConnections();
      await closing;
    },
  );
}

main().catch((err: unknown) => {
  console.error('bench gateway failed to start:', err);
  process.exit(1);
});
