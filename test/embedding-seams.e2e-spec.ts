import 'reflect-metadata';
import { Controller, Get, Inject, Injectable, type INestApplication, Module, NotFoundException, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { type Observable, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import {
  type CompletedRun,
  DEFAULT_UPSTREAM_CLIENT,
  GATEWAY_CONFIG,
  GatewayModule,
  GatewayOverrideError,
  type InferOptions,
  MemoryStateStore,
  type ModelEvent,
  type ModelRequest,
  type PriorState,
  type ResponseRequest,
  type ResponseStateStore,
  ResponsesService,
  type UpstreamClient,
  configureGatewayApp,
  toErrorEnvelope,
} from '#src/index.js';
import { parseSse } from './support/gateway-harness.js';

/** A host's own route, next to the gateway's. */
@Controller('things')
class ThingsController {
  @Get(':id')
  get(): never {
    throw new NotFoundException('thing 7 is not in the warehouse');
  }

  @Get()
  list(): { things: string[] } {
    return { things: ['a'] };
  }
}

@Module({ controllers: [ThingsController] })
class HostModule {}

/** A host setting reached through DI by the override factories. */
@Injectable()
class TenantSettings {
  tenant = 'acme';
}
@Module({ providers: [TenantSettings], exports: [TenantSettings] })
class TenantModule {}

/** Wraps the configured client: adds a header per request, records the context, counts closes. */
class HeaderAddingUpstream implements UpstreamClient {
  static closed = 0;
  readonly seen: NonNullable<InferOptions['context']>[] = [];
  constructor(
    private readonly inner: UpstreamClient,
    private readonly tenant: string,
  ) {}
  get dialect() {
    return this.inner.dialect;
  }
  infer(request: ModelRequest, options: InferOptions = {}): Observable<ModelEvent> {
    const context = options.context!;
    this.seen.push(context);
    return this.inner.infer(request, { ...options, context: { ...context, headers: { ...context.headers, 'x-tenant': this.tenant, 'x-owner': String(context.owner) } } });
  }
  listModels(signal?: AbortSignal) {
    return this.inner.listModels(signal);
  }
  probe(signal?: AbortSignal) {
    return this.inner.probe(signal);
  }
  close(): void {
    HeaderAddingUpstream.closed++;
  }
}

/** The same wrapper as a class Nest constructs (the `useClass` / bare-class form). */
@Injectable()
class InjectedHeaderUpstream extends HeaderAddingUpstream {
  constructor(@Inject(DEFAULT_UPSTREAM_CLIENT) inner: UpstreamClient, settings: TenantSettings) {
    super(inner, settings.tenant);
  }
}

/** A response-state port that remembers runs in a map. */
class RecordingState implements ResponseStateStore, OnApplicationShutdown {
  readonly saved: CompletedRun[] = [];
  shutdowns = 0;
  async load(request: ResponseRequest): Promise<PriorState | null> {
    if (!request.previousResponseId) return null;
    const run = this.saved.find((r) => r.response.id === request.previousResponseId);
    return run ? { modelItems: [...(run.prior?.modelItems ?? []), ...run.modelItems], publicItems: [] } : null;
  }
  async save(run: CompletedRun): Promise<void> {
    this.saved.push(run);
  }
  onApplicationShutdown(): void {
    this.shutdowns++;
  }
}

/** A state store that counts its lifecycle. */
class CountingStore extends MemoryStateStore {
  inits = 0;
  closes = 0;
  override async init(): Promise<void> {
    this.inits++;
  }
  override async close(): Promise<void> {
    this.closes++;
  }
}

let simulator: SimulatedUpstream;
let simulatorUrl: string;
beforeAll(async () => {
  simulator = new SimulatedUpstream();
  simulatorUrl = (await simulator.listen(0, '127.0.0.1')).url;
});
afterAll(() => simulator.close());

async function serve(module: ReturnType<typeof GatewayModule.forRoot>, extra: Array<new (...a: any[]) => unknown> = []) {
  @Module({ imports: [module, ...extra] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { bodyParser: false, logger: false });
  configureGatewayApp(app);
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  return { app, base, openai: new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-host', maxRetries: 0 }) };
}

async function closeApp(app: INestApplication): Promise<void> {
  const closing = app.close();
  (app.getHttpServer() as import('node:http').Server).closeAllConnections();
  await closing;
}

const memory = (more: Record<string, unknown> = {}) => ({ upstream: { baseUrl: simulatorUrl }, storage: { driver: 'memory' }, ...more });

describe('the gateway leaves the host application alone', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => {
    ({ app, base } = await serve(GatewayModule.forRoot({ config: memory({ auth: { apiKeys: ['sk-host'] } }) }), [HostModule]));
  });
  afterAll(() => closeApp(app));

  it("a host's NotFoundException keeps its message and Nest's shape", async () => {
    const res = await fetch(`${base}/things/7`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, message: 'thing 7 is not in the warehouse', error: 'Not Found' });
  });

  it('an unknown route of the host answers as Nest does, not in the gateway envelope', async () => {
    const res = await fetch(`${base}/nowhere`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ statusCode: 404, message: expect.stringContaining('/nowhere') });
  });

  it("the gateway's API keys guard its own routes only", async () => {
    expect((await fetch(`${base}/things`)).status).toBe(200);
    const refused = await fetch(`${base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
  });

  it("the gateway's own errors still use the OpenAI envelope", async () => {
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-host' },
      body: JSON.stringify({ model: 'm', input: 'hi', temperature: 'hot' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: expect.objectContaining({ type: 'invalid_request_error', param: 'temperature' }) });
  });
});

describe('UPSTREAM_CLIENT override', () => {
  it('by factory in forRoot wraps the default client; the context carries owner, request id and forwarded headers', async () => {
    let wrapper!: HeaderAddingUpstream;
    const { app, base } = await serve(
      GatewayModule.forRoot({
        config: memory({ auth: { apiKeys: ['sk-host'] }, upstream: { baseUrl: simulatorUrl, forwardHeaders: ['x-request-id'] } }),
        imports: [TenantModule],
        upstream: {
          inject: [DEFAULT_UPSTREAM_CLIENT, TenantSettings],
          useFactory: (inner: UpstreamClient, settings: TenantSettings) => (wrapper = new HeaderAddingUpstream(inner, settings.tenant)),
        },
      }),
    );
    const closedBefore = HeaderAddingUpstream.closed;
    try {
      const res = await fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-host', 'x-request-id': 'trace-1', 'x-not-forwarded': 'no' },
        body: JSON.stringify({ model: 'm', input: '[[say wrapped]]' }),
      });
      const response = (await res.json()) as { id: string };
      const upstreamSaw = simulator.requests.at(-1)!.headers;
      expect(upstreamSaw).toMatchObject({ 'x-tenant': 'acme', 'x-request-id': 'trace-1' });
      expect(upstreamSaw['x-not-forwarded']).toBeUndefined();
      // The inbound key never travels upstream, and the owner is its hash, not the key.
      expect(upstreamSaw.authorization).toBeUndefined();
      expect(wrapper.seen).toEqual([{ owner: expect.stringMatching(/^[0-9a-f]{64}$/), requestId: response.id, headers: { 'x-request-id': 'trace-1' } }]);
    } finally {
      await closeApp(app);
    }
    expect(HeaderAddingUpstream.closed).toBe(closedBefore + 1);
  });

  it('by class in forRootAsync, constructed with DI', async () => {
    const { app, openai } = await serve(
      GatewayModule.forRootAsync({
        imports: [TenantModule],
        inject: [TenantSettings],
        useFactory: (settings: TenantSettings) => ({ config: memory({ upstream: { baseUrl: simulatorUrl, forwardHeaders: [settings.tenant] } }) }),
        upstream: InjectedHeaderUpstream,
      }),
    );
    try {
      const response = await openai.responses.create({ model: 'm', input: '[[say by class]]' });
      expect(response.output_text).toBe('by class');
      expect(simulator.requests.at(-1)!.headers['x-tenant']).toBe('acme');
      expect(app.get(GATEWAY_CONFIG)).toBeDefined();
    } finally {
      await closeApp(app);
    }
  });

  it('an override that is not an upstream client fails boot, naming what is missing', async () => {
    await expect(
      NestFactory.create(GatewayModule.forRoot({ config: memory(), upstream: { useValue: { dialect: 'responses' } as unknown as UpstreamClient } }), {
        logger: false,
        abortOnError: false,
      }).then((app) => app.init()),
    ).rejects.toThrow(/UPSTREAM_CLIENT override \(Object\) does not implement infer\(\), listModels\(\), probe\(\)/);
  });
});

describe('upstream.forwardHeaders on every edge', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => {
    ({ app, base } = await serve(GatewayModule.forRoot({ config: memory({ upstream: { baseUrl: simulatorUrl, forwardHeaders: ['X-Trace'] } }) })));
  });
  afterAll(() => closeApp(app));

  it('Responses, Messages and WebSocket mode pass the named inbound header on', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-trace': `via ${path}`, 'x-other': 'no' }, body: JSON.stringify(body) });
    await (await post('/v1/responses', { model: 'm', input: '[[say a]]' })).text();
    expect(simulator.requests.at(-1)!.headers).toMatchObject({ 'x-trace': 'via /v1/responses' });
    await (await post('/v1/messages', { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: '[[say b]]' }] })).text();
    expect(simulator.requests.at(-1)!.headers).toMatchObject({ 'x-trace': 'via /v1/messages' });
    expect(simulator.requests.at(-1)!.headers['x-other']).toBeUndefined();

    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/responses`, { headers: { 'x-trace': 'via socket' } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data) => {
        if ((JSON.parse(String(data)) as { type: string }).type === 'response.completed') resolve();
      }),
    );
    ws.send(JSON.stringify({ type: 'response.create', model: 'm', input: '[[say c]]' }));
    await done;
    ws.close();
    expect(simulator.requests.at(-1)!.headers).toMatchObject({ 'x-trace': 'via socket' });
  });
});

describe('RESPONSE_STATE override', () => {
  it.each([
    ['forRoot with a class', () => GatewayModule.forRoot({ config: memory(), responseState: RecordingState })],
    [
      'forRootAsync with a factory',
      () =>
        GatewayModule.forRootAsync({
          useFactory: () => ({ config: memory() }),
          responseState: { useFactory: () => new RecordingState() },
        }),
    ],
  ])('%s: the loop saves to it, continues from it, and it is shut down with the app', async (_how, module) => {
    const { app, openai } = await serve(module());
    const state = app.get<RecordingState>((await import('#src/index.js')).RESPONSE_STATE);
    const first = await openai.responses.create({ model: 'm', input: '[[say one]]' });
    const second = await openai.responses.create({ model: 'm', input: 'and again', previous_response_id: first.id });
    expect(state.saved.map((r) => r.response.id)).toEqual([first.id, second.id]);
    // The continuation read the first turn from the override: the upstream saw it.
    const input = (simulator.requests.at(-1)!.body as { input: Array<{ role?: string }> }).input;
    expect(input.length).toBeGreaterThan(1);
    // The built-in state module is replaced, so its stored-response routes are not served.
    await expect(openai.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await closeApp(app);
    expect(state.shutdowns).toBe(1);
  });
});

describe('STATE_STORE override', () => {
  it.each([
    ['forRoot with a factory', (store: CountingStore) => GatewayModule.forRoot({ config: memory(), stateStore: { useFactory: () => store } })],
    ['forRootAsync with a value', (store: CountingStore) => GatewayModule.forRootAsync({ useFactory: () => ({ config: memory() }), stateStore: { useValue: store } })],
  ])('%s: initialised at boot, used by the state routes, closed at shutdown', async (_how, module) => {
    const store = new CountingStore();
    const { app, openai } = await serve(module(store));
    expect(store.inits).toBe(1);
    const created = await openai.responses.create({ model: 'm', input: '[[say stored]]' });
    expect((await store.getResponse(created.id, null))?.id).toBe(created.id);
    expect((await openai.responses.retrieve(created.id)).output_text).toBe('stored');
    await closeApp(app);
    expect(store.closes).toBe(1);
  });

  it('cannot take effect without the state module: boot stops with the reason', () => {
    expect(() => GatewayModule.forRoot({ config: memory(), state: false, stateStore: { useValue: new CountingStore() } })).toThrow(GatewayOverrideError);
    expect(() => GatewayModule.forRoot({ config: memory(), state: false, stateStore: { useValue: new CountingStore() } })).toThrow(
      /stateStore cannot take effect with state: false/,
    );
  });

  it('cannot take effect next to a responseState override (in forRootAsync too)', () => {
    expect(() =>
      GatewayModule.forRootAsync({
        useFactory: () => ({ config: memory() }),
        responseState: RecordingState,
        stateStore: { useValue: new CountingStore() },
      }),
    ).toThrow(/stateStore cannot take effect together with responseState/);
  });

  it('a store missing methods fails boot', async () => {
    await expect(
      NestFactory.create(GatewayModule.forRoot({ config: memory(), stateStore: { useValue: { init: async () => undefined } as never } }), {
        logger: false,
        abortOnError: false,
      }).then((app) => app.init()),
    ).rejects.toThrow(/STATE_STORE override \(Object\) does not implement close\(\), saveResponse\(\)/);
  });
});

describe('ResponsesService: the API without HTTP', () => {
  let app: INestApplication;
  let base: string;
  let service: ResponsesService;
  beforeAll(async () => {
    ({ app, base } = await serve(GatewayModule.forRoot({ config: memory() })));
    service = app.get(ResponsesService);
  });
  afterAll(() => closeApp(app));

  it('create() gives the final response; stream() the same events as SSE', async () => {
    const response = await firstValueFrom(service.create({ model: 'm', input: '[[say direct]]' }, { owner: 'team-a' }));
    expect(response).toMatchObject({ object: 'response', status: 'completed' });
    expect(JSON.stringify(response.output)).toContain('direct');

    const body = { model: 'm', input: '[[tokens 3]]' };
    const events = await lastValueFrom(service.stream(body).pipe(toArray()));
    const sse = await fetch(`${base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
    expect(events.map((e) => e.type)).toEqual(parseSse(await sse.text()).map((e) => e.data.type));
  });

  /**
   * A domain error carries no HTTP status; an embedder answers it with the
   * package's `toErrorEnvelope`, which gives what the HTTP route sends.
   */
  const answered = (run: Observable<unknown>) =>
    firstValueFrom(run).then(
      (value) => {
        throw new Error(`expected a failure, got ${JSON.stringify(value)?.slice(0, 200)}`);
      },
      (err: unknown) => {
        const { status, body } = toErrorEnvelope(err);
        return { status, param: body.error.param };
      },
    );

  it('a bad body fails the Observable with the same error the HTTP route sends as a 400', async () => {
    await expect(answered(service.create({ model: 'm', input: 'x', tools: [{ type: 'function' }] }))).resolves.toMatchObject({
      status: 400,
      param: 'tools[0].name',
    });
    await expect(answered(service.create('not an object'))).resolves.toMatchObject({ status: 400 });
  });

  it('refuses upstream headers the transport manages or cannot send, naming them', async () => {
    const refused = (headers: Record<string, unknown>) => answered(service.create({ model: 'm', input: 'x' }, { headers: headers as Record<string, string> }));
    await expect(refused({ 'Content-Length': '5' })).resolves.toMatchObject({ status: 400, param: 'headers.Content-Length' });
    await expect(refused({ 'transfer-encoding': 'chunked' })).resolves.toMatchObject({ status: 400, param: 'headers.transfer-encoding' });
    await expect(refused({ 'x-ok': 'a\r\nx-injected: 1' })).resolves.toMatchObject({ status: 400, param: 'headers.x-ok' });
    await expect(refused({ 'bad name': 'v' })).resolves.toMatchObject({ status: 400, param: 'headers.bad name' });
    await expect(refused({ 'x-n': 5 })).resolves.toMatchObject({ status: 400, param: 'headers.x-n' });
  });

  it.each([10, 100])('passes %i caller headers on to the upstream', async (n) => {
    const headers = Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h-${i}`, `v${i}`]));
    await firstValueFrom(service.create({ model: 'm', input: '[[say ok]]' }, { headers }));
    const seen = simulator.requests.at(-1)!.headers;
    expect(Object.keys(seen).filter((k) => k.startsWith('x-h-'))).toHaveLength(n);
    expect(seen[`x-h-${n - 1}`]).toBe(`v${n - 1}`);
  });

  it('stored state is scoped to the owner the caller names', async () => {
    const first = await firstValueFrom(service.create({ model: 'm', input: '[[say mine]]' }, { owner: 'team-a' }));
    await expect(answered(service.create({ model: 'm', input: 'more', previous_response_id: first.id }, { owner: 'team-b' }))).resolves.toMatchObject({
      status: 404,
      param: 'previous_response_id',
    });
    const next = await firstValueFrom(service.create({ model: 'm', input: 'more', previous_response_id: first.id }, { owner: 'team-a' }));
    expect(next.status).toBe('completed');
  });
});
