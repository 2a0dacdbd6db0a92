import { type DynamicModule, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GATEWAY_CONFIG, GatewayConfig, TimeoutConfig } from '#config/gateway-config.js';
import { ChatDialectClient } from './chat-dialect.client.js';
import { ResponsesDialectClient } from './responses-dialect.client.js';
import { createUpstreamClient } from './upstream-client.factory.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { UpstreamModule } from './upstream.module.js';
import { ScriptedUpstream, sendJson, sleep, testTimeouts, upstreamConfig } from './testing/scripted-upstream.server.js';

/** Stands in for the app's global config module. */
@Module({})
class ConfigForTest {
  static with(config: GatewayConfig): DynamicModule {
    return { module: ConfigForTest, global: true, providers: [{ provide: GATEWAY_CONFIG, useValue: config }], exports: [GATEWAY_CONFIG] };
  }
}

function gatewayConfig(baseUrl: string, dialect: 'responses' | 'chat'): GatewayConfig {
  const config = new GatewayConfig();
  config.upstream = upstreamConfig(baseUrl, { dialect });
  config.timeouts = testTimeouts();
  return config;
}

describe('UpstreamModule', () => {
  let upstream: ScriptedUpstream;

  beforeEach(async () => {
    upstream = await ScriptedUpstream.start((_req, res) => sendJson(res, 200, { object: 'list', data: [] }));
  });

  afterEach(async () => {
    await upstream.close();
  });

  it.each([
    ['responses', ResponsesDialectClient],
    ['chat', ChatDialectClient],
  ] as const)('provides the %s client from GATEWAY_CONFIG', async (dialect, Client) => {
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigForTest.with(gatewayConfig(upstream.baseUrl, dialect)), UpstreamModule.forRoot()],
    }).compile();

    const client = moduleRef.get<UpstreamClient>(UPSTREAM_CLIENT);
    expect(client).toBeInstanceOf(Client);
    expect(client.dialect).toBe(dialect);
    await client.probe();
    expect(upstream.openConnections).toBe(1);

    // Shutdown drops the pooled keep-alive socket.
    await moduleRef.close();
    for (let i = 0; i < 50 && upstream.openConnections > 0; i++) await sleep(5);
    expect(upstream.openConnections).toBe(0);
  });
});

describe('createUpstreamClient', () => {
  it('builds the client for the configured dialect', () => {
    const responses = createUpstreamClient(upstreamConfig('http://127.0.0.1:8000/v1'), new TimeoutConfig());
    const chat = createUpstreamClient(upstreamConfig('http://127.0.0.1:11434/v1', { dialect: 'chat' }), new TimeoutConfig());
    expect(responses).toBeInstanceOf(ResponsesDialectClient);
    expect(chat).toBeInstanceOf(ChatDialectClient);
    responses.close();
    chat.close();
  });

  it('refuses an unknown dialect', () => {
    const config = upstreamConfig('http://127.0.0.1:8000/v1', { dialect: 'grpc' as 'chat' });
    expect(() => createUpstreamClient(config, new TimeoutConfig())).toThrow('Unknown upstream dialect: grpc');
  });
});
