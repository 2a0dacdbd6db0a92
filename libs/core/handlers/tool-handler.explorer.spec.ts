import { Injectable, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { ProbeExecutor, ProbeToolHandler } from '../testing/probe-tool.js';
import { GatewayExecutorProvider, ToolHandlerProvider } from './tool-handler.decorators.js';
import { ToolHandlerExplorer, ToolRegistrationError } from './tool-handler.explorer.js';
import type { GatewayEventPlan, GatewayExecutor, NormalizedTool, ToolHandler, ToolOutput } from './tool-handler.interface.js';

/** Minimal tagged providers; each test picks the combination it needs. */
abstract class StubHandler implements ToolHandler {
  abstract readonly type: string;
  abstract readonly gatewayOwned: boolean;
  validate(): unknown {
    return {};
  }
  normalize(): NormalizedTool[] {
    return [];
  }
}

abstract class StubExecutor implements GatewayExecutor {
  abstract readonly type: string;
  async execute(): Promise<ToolOutput> {
    return { text: '' };
  }
  planEvents(): GatewayEventPlan {
    return { startedItem: { type: 'x' }, beforeExecute: [], afterExecute: () => [] };
  }
  publicOutput() {
    return { type: 'x' };
  }
}

@Injectable()
@ToolHandlerProvider()
class SearchHandler extends StubHandler {
  readonly type = 'web_search';
  readonly aliases = ['web_search_preview', 'web_search_2025_08_26'];
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['web_search_call'];
}

@Injectable()
@GatewayExecutorProvider()
class SearchExecutor extends StubExecutor {
  readonly type = 'web_search';
}

@Injectable()
@ToolHandlerProvider()
class SecondSearchHandler extends StubHandler {
  readonly type = 'web_search';
  readonly gatewayOwned = true;
}

@Injectable()
@GatewayExecutorProvider()
class SecondSearchExecutor extends StubExecutor {
  readonly type = 'web_search';
}

/** Claims one of SearchHandler's aliases as its own type. */
@Injectable()
@ToolHandlerProvider()
class PreviewHandler extends StubHandler {
  readonly type = 'web_search_preview';
  readonly gatewayOwned = true;
}

/** Claims SearchHandler's history item type. */
@Injectable()
@ToolHandlerProvider()
class CallItemHandler extends StubHandler {
  readonly type = 'other_search';
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['web_search_call'];
}

@Injectable()
@GatewayExecutorProvider()
class OrphanExecutor extends StubExecutor {
  readonly type = 'code_interpreter';
}

@Injectable()
@GatewayExecutorProvider()
class FunctionExecutor extends StubExecutor {
  readonly type = 'function';
}

/** Not tagged: discovery must not pick it up. */
@Injectable()
class UntaggedHandler extends StubHandler {
  readonly type = 'untagged';
  readonly gatewayOwned = false;
}

async function explore(...providers: Provider[]): Promise<ToolHandlerExplorer> {
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule], providers: [ToolHandlerExplorer, ...providers] }).compile();
  await moduleRef.init();
  return moduleRef.get(ToolHandlerExplorer);
}

describe('ToolHandlerExplorer (Nest discovery)', () => {
  it('finds tagged handlers and executors and indexes them by type, alias and item type', async () => {
    const explorer = await explore(SearchHandler, SearchExecutor, FunctionToolHandler, ProbeToolHandler, ProbeExecutor, UntaggedHandler);

    expect(explorer.types().sort()).toEqual(['function', 'probe', 'web_search']);
    expect(explorer.handlerForType('web_search')).toBeInstanceOf(SearchHandler);
    expect(explorer.handlerForWireTag('web_search')).toBeInstanceOf(SearchHandler);
    expect(explorer.handlerForWireTag('web_search_preview')).toBeInstanceOf(SearchHandler);
    expect(explorer.handlerForWireTag('web_search_2025_08_26')).toBeInstanceOf(SearchHandler);
    expect(explorer.handlerForItemType('web_search_call')).toBeInstanceOf(SearchHandler);
    expect(explorer.handlerForItemType('probe_call')).toBeInstanceOf(ProbeToolHandler);
    expect(explorer.executorForType('web_search')).toBeInstanceOf(SearchExecutor);
    expect(explorer.executorForType('probe')).toBeInstanceOf(ProbeExecutor);
    expect(explorer.handlerForType('function')).toBeInstanceOf(FunctionToolHandler);
    expect(explorer.executorForType('function')).toBeUndefined();
    expect(explorer.handlerForType('untagged')).toBeUndefined();
    // An alias is a wire tag, not a type of its own.
    expect(explorer.handlerForType('web_search_preview')).toBeUndefined();
  });

  it('hands out the same instances DI created', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule], providers: [ToolHandlerExplorer, ProbeToolHandler, ProbeExecutor] }).compile();
    await moduleRef.init();
    const explorer = moduleRef.get(ToolHandlerExplorer);
    expect(explorer.executorForType('probe')).toBe(moduleRef.get(ProbeExecutor));
    expect(explorer.handlerForType('probe')).toBe(moduleRef.get(ProbeToolHandler));
  });

  it('rejects two handlers for one type', async () => {
    await expect(explore(SearchHandler, SecondSearchHandler)).rejects.toThrow(ToolRegistrationError);
    await expect(explore(SearchHandler, SecondSearchHandler)).rejects.toThrow(/ToolHandler for type "web_search" is claimed twice/);
  });

  it('rejects two executors for one type', async () => {
    await expect(explore(SearchHandler, SearchExecutor, SecondSearchExecutor)).rejects.toThrow(/GatewayExecutor for type "web_search" is claimed twice/);
  });

  it('rejects an executor whose type has no handler', async () => {
    await expect(explore(SearchHandler, OrphanExecutor)).rejects.toThrow(ToolRegistrationError);
    await expect(explore(SearchHandler, OrphanExecutor)).rejects.toThrow(/"code_interpreter" has no ToolHandler/);
  });

  it('rejects an executor for a client-owned type', async () => {
    await expect(explore(FunctionToolHandler, FunctionExecutor)).rejects.toThrow(ToolRegistrationError);
    await expect(explore(FunctionToolHandler, FunctionExecutor)).rejects.toThrow(/"function" is client-owned/);
  });

  it("rejects a type that collides with another handler's alias, in either order", async () => {
    await expect(explore(SearchHandler, PreviewHandler)).rejects.toThrow(/wire tag "web_search_preview" is claimed twice/);
    await expect(explore(PreviewHandler, SearchHandler)).rejects.toThrow(/wire tag "web_search_preview" is claimed twice/);
  });

  it('rejects two handlers claiming one history item type', async () => {
    await expect(explore(SearchHandler, CallItemHandler)).rejects.toThrow(/item type "web_search_call" is claimed twice/);
  });
});
