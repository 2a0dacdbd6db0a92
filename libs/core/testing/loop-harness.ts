import { Global, Module, type DynamicModule, type Provider, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { GATEWAY_CONFIG, type GatewayConfig } from '#config/gateway-config.js';
import { UPSTREAM_CLIENT, type UpstreamClient } from '../upstream/upstream-client.interface.js';
import { CoreModule } from '../core.module.js';
import { LoopService } from '../loop/loop.service.js';
import type { PriorState, ResponseRequest } from '../loop/response-request.js';
import type { CompletedRun, ResponseStateStore } from '../loop/response-state.interface.js';
import { testConfig } from './fixtures.js';

/** Provides what the host application would: the validated config and the upstream client. */
@Global()
@Module({})
class LoopHostModule {}

export interface LoopHarness {
  loop: LoopService;
  config: GatewayConfig;
  moduleRef: TestingModule;
  close(): Promise<void>;
}

/**
 * The real core (explorer, preparation, scheduler, loop) wired by Nest, with
 * the given tool modules and upstream. No HTTP anywhere.
 */
export async function createLoopHarness(options: {
  upstream: UpstreamClient;
  toolModules: Array<Type | DynamicModule>;
  config?: Record<string, unknown>;
  /** What the gateway around core would provide to the tool modules (the `TOOL_STORAGE` port...). */
  providers?: Provider[];
}): Promise<LoopHarness> {
  const config = testConfig(options.config);
  const host: DynamicModule = {
    module: LoopHostModule,
    global: true,
    providers: [{ provide: GATEWAY_CONFIG, useValue: config }, { provide: UPSTREAM_CLIENT, useValue: options.upstream }, ...(options.providers ?? [])],
    exports: [GATEWAY_CONFIG, UPSTREAM_CLIENT, ...(options.providers ?? []).map((p) => ('provide' in p ? p.provide : p))],
  };
  const moduleRef = await Test.createTestingModule({ imports: [host, CoreModule, ...options.toolModules] }).compile();
  await moduleRef.init();
  return { loop: moduleRef.get(LoopService), config, moduleRef, close: () => moduleRef.close() };
}

/** Conversation state in memory, recording what the loop saves and discards. */
export class RecordingStateStore implements ResponseStateStore {
  readonly saved: CompletedRun[] = [];
  readonly discarded: string[] = [];

  constructor(private readonly prior: PriorState | null = null) {}

  async load(_request: ResponseRequest): Promise<PriorState | null> {
    return this.prior;
  }

  async save(run: CompletedRun): Promise<void> {
    this.saved.push(run);
  }

  async discard(_request: ResponseRequest, responseId: string): Promise<void> {
    this.discarded.push(responseId);
  }
}
