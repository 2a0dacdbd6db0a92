import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IsNumber, IsOptional, IsString } from 'class-validator';
import OpenAI from 'openai';
import { Observable } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { ToolHandlerProvider, defineConfigSection, registerConfigSection } from '#src/index.js';
import type { ModelEvent, ModelRequest, UpstreamClient } from '#src/index.js';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';

/** A host's own settings source, resolved through DI like any enterprise config service. */
@Injectable()
class HostSettings {
  upstreamUrl = '';
}

@Module({ providers: [HostSettings], exports: [HostSettings] })
class HostSettingsModule {}

async function listen(app: Awaited<ReturnType<typeof NestFactory.create>>): Promise<string> {
  configureGatewayApp(app);
  await app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/v1`;
}

describe('GatewayModule as an importable dynamic module', () => {
  let simulator: SimulatedUpstream;
  let simulatorUrl: string;
  beforeAll(async () => {
    simulator = new SimulatedUpstream();
    simulatorUrl = (await simulator.listen()).url;
  });
  afterAll(() => simulator.close());

  it('forRootAsync takes one factory shape, { config }, and names a factory that gives the settings bare', async () => {
    const bare = GatewayModule.forRootAsync({ useFactory: () => ({ storage: { driver: 'memory' } }) as never });
    await expect(NestFactory.create(bare, { bodyParser: false, logger: false, abortOnError: false })).rejects.toThrow(
      /forRootAsync: the factory must resolve to \{ config \}, as forRoot takes it; it gave storage beside it/,
    );
  });

  it('forRootAsync builds its config from an injected host provider', async () => {
    const app = await NestFactory.create(
      GatewayModule.forRootAsync({
        imports: [HostSettingsModule],
        inject: [HostSettings],
        useFactory: (settings: HostSettings) => ({
          config: { upstream: { baseUrl: settings.upstreamUrl || simulatorUrl }, storage: { driver: 'memory' } },
        }),
      }),
      { bodyParser: false, logger: false },
    );
    try {
      const client = new OpenAI({ baseURL: await listen(app), apiKey: 'x', maxRetries: 0 });
      const response = await client.responses.create({ model: 'm', input: '[[say configured through DI]]' });
      expect(response.output_text).toBe('configured through DI');
    } finally {
      await app.close();
    }
  });

  it('an enterprise team can replace the upstream client through DI', async () => {
    const seen: ModelRequest[] = [];
    const upstream: UpstreamClient = {
      dialect: 'responses',
      infer(request: ModelRequest) {
        seen.push(request);
        return new Observable<ModelEvent>((sub) => {
          sub.next({ type: 'message.start', key: 'm' });
          sub.next({ type: 'message.done', key: 'm', text: 'from a custom transport' });
          sub.next({ type: 'finish', status: 'completed' });
          sub.complete();
        });
      },
      listModels: async () => [{ id: 'custom', object: 'model', created: 0, owned_by: 'host' }],
      probe: async () => undefined,
    };
    const app = await NestFactory.create(GatewayModule.forRoot({ config: { storage: { driver: 'memory' } }, upstream: { useValue: upstream } }), {
      bodyParser: false,
      logger: false,
    });
    try {
      const client = new OpenAI({ baseURL: await listen(app), apiKey: 'x', maxRetries: 0 });
      const response = await client.responses.create({ model: 'custom', input: 'hi', instructions: 'be kind' });
      expect(response.output_text).toBe('from a custom transport');
      expect(seen[0]).toMatchObject({ model: 'custom', instructions: 'be kind', stream: false });
      expect((await client.models.list()).data[0].id).toBe('custom');
    } finally {
      await app.close();
    }
  });

  it('refuses to boot when two modules claim one tool type', async () => {
    @Injectable()
    @ToolHandlerProvider({ type: 'function' })
    class SecondFunctionHandler extends FunctionToolHandler {}
    @Module({ providers: [SecondFunctionHandler] })
    class ConflictingModule {}

    await expect(
      NestFactory.create(GatewayModule.forRoot({ config: { storage: { driver: 'memory' } }, imports: [ConflictingModule] }), {
        bodyParser: false,
        logger: false,
        abortOnError: false,
      }).then((app) => app.init()),
    ).rejects.toThrow(/ToolHandler for type "function" is claimed twice/);
  });

  it('refuses to boot with an invalid config, naming the setting', () => {
    expect(() => GatewayModule.forRoot({ config: { upstream: { dialect: 'grpc' } } })).toThrow(/upstream\.dialect/);
  });

  describe("a host module's own config section", () => {
    const TICKETS = Symbol('TICKETS');
    class TicketsConfig {
      @IsOptional() @IsString() baseUrl?: string;
      @IsNumber() retries = 3;
    }
    const ticketsSection = defineConfigSection({ key: 'tickets', type: TicketsConfig, token: TICKETS });
    @Module({ providers: [registerConfigSection(ticketsSection)], exports: [TICKETS] })
    class TicketsModule {}

    it('is validated with the rest when its module is imported, and injected parsed', async () => {
      expect(() => GatewayModule.forRoot({ config: { tickets: { retires: 2 } }, imports: [TicketsModule] })).toThrow(
        'unknown config key "tickets.retires" (did you mean "tickets.retries"?)',
      );
      expect(() => GatewayModule.forRoot({ config: { tickets: { retries: 'x' } }, imports: [TicketsModule] })).toThrow(/tickets\.retries: must be a number/);
      const app = await NestFactory.createApplicationContext(
        GatewayModule.forRoot({ config: { storage: { driver: 'memory' }, tickets: { retries: 5 } }, imports: [TicketsModule] }),
        { logger: false },
      );
      try {
        expect(app.get(TICKETS)).toEqual({ retries: 5 });
      } finally {
        await app.close();
      }
    });

    it('is an unknown key without its module, and so is a built-in section whose module is left out', () => {
      expect(() => GatewayModule.forRoot({ config: { tickets: {} } })).toThrow('unknown config key "tickets"');
      expect(() => GatewayModule.forRoot({ config: { mcp: { servers: [] } }, toolModules: [] })).toThrow('unknown config key "mcp"');
      expect(() => GatewayModule.forRoot({ config: { mcp: { servers: [] } } })).not.toThrow();
    });
  });
});
