import { Injectable, Scope, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { FunctionToolHandler } from '#tools/function/function.tool-handler.js';
import { ProbeExecutor, ProbeToolHandler } from '../testing/probe-tool.js';
import type { InputItemHandler } from '#tool-sdk/contract/input-items.js';
import { GatewayExecutorProvider, InputItemProvider, ToolHandlerProvider } from '#tool-sdk/decorators.js';
import { ToolHandlerExplorer, ToolRegistrationError } from './tool-handler.explorer.js';
import type { GatewayEventPlan, GatewayExecutor, NormalizedTool, ToolHandler, ToolOutput } from '#tool-sdk/contract/index.js';

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
@ToolHandlerProvider({ type: 'web_search' })
class SearchHandler extends StubHandler {
  readonly type = 'web_search';
  readonly aliases = ['web_search_preview', 'web_search_2025_08_26'];
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['web_search_call'];
}

@Injectable()
@GatewayExecutorProvider({ type: 'web_search' })
class SearchExecutor extends StubExecutor {
  readonly type = 'web_search';
}

@Injectable()
@ToolHandlerProvider({ type: 'web_search' })
class SecondSearchHandler extends StubHandler {
  readonly type = 'web_search';
  readonly gatewayOwned = true;
}

@Injectable()
@GatewayExecutorProvider({ type: 'web_search' })
class SecondSearchExecutor extends StubExecutor {
  readonly type = 'web_search';
}

/** Claims one of SearchHandler's aliases as its own type. */
@Injectable()
@ToolHandlerProvider({ type: 'web_search_preview' })
class PreviewHandler extends StubHandler {
  readonly type = 'web_search_preview';
  readonly gatewayOwned = true;
}

/** Claims SearchHandler's history item type. */
@Injectable()
@ToolHandlerProvider({ type: 'other_search' })
class CallItemHandler extends StubHandler {
  readonly type = 'other_search';
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['web_search_call'];
}

@Injectable()
@GatewayExecutorProvider({ type: 'code_interpreter' })
class OrphanExecutor extends StubExecutor {
  readonly type = 'code_interpreter';
}

@Injectable()
@GatewayExecutorProvider({ type: 'function' })
class FunctionExecutor extends StubExecutor {
  readonly type = 'function';
}

/** Shaped like a handler but not tagged: the boot must refuse it rather than skip its type. */
@Injectable()
class UntaggedHandler extends StubHandler {
  readonly type = 'untagged';
  readonly gatewayOwned = false;
}

/** Its decorator says one type, its instance another: a copy-paste slip that must not route silently. */
@Injectable()
@ToolHandlerProvider({ type: 'web_search' })
class MislabelledHandler extends StubHandler {
  readonly type = 'web_fetch';
  readonly gatewayOwned = true;
}

@Injectable()
@ToolHandlerProvider({} as { type: string })
class KeylessHandler extends StubHandler {
  readonly type = 'keyless';
  readonly gatewayOwned = false;
}

@Injectable({ scope: Scope.REQUEST })
@ToolHandlerProvider({ type: 'per_request' })
class RequestScopedHandler extends StubHandler {
  readonly type = 'per_request';
  readonly gatewayOwned = false;
}

@Injectable()
@InputItemProvider({ type: 'summary_note' })
class SummaryNoteItem implements InputItemHandler {
  readonly itemType = 'summary_note';
  toModelItems() {
    return [];
  }
}

/** An input item provider claiming a tool's history item type. */
@Injectable()
@InputItemProvider({ type: 'web_search_call' })
class SearchCallItem implements InputItemHandler {
  readonly itemType = 'web_search_call';
  toModelItems() {
    return [];
  }
}

@Injectable()
@ToolHandlerProvider({ type: 'other_search' })
class SearchChoiceHandler extends StubHandler {
  readonly type = 'other_search';
  readonly gatewayOwned = false;
  readonly toolChoice = { types: ['web_search'], resolve: () => ({ force: 'x' }) };
}

@Injectable()
@ToolHandlerProvider({ type: 'web_search' })
class SearchWithChoiceHandler extends SearchHandler {
  readonly toolChoice = { types: ['web_search'], resolve: () => ({ force: 'web_search' }) };
}

async function explore(...providers: Provider[]): Promise<ToolHandlerExplorer> {
  const moduleRef = await Test.createTestingModule({ imports: [DiscoveryModule], providers: [ToolHandlerExplorer, ...providers] }).compile();
  await moduleRef.init();
  return moduleRef.get(ToolHandlerExplorer);
}

describe('ToolHandlerExplorer (Nest discovery)', () => {
  it('refuses a provider shaped like a handler that lacks its decorator, naming it and the fix', async () => {
    await expect(explore(FunctionToolHandler, UntaggedHandler)).rejects.toThrow(
      `UntaggedHandler is shaped like a ToolHandler for "untagged" but is not tagged: add @ToolHandlerProvider({ type: 'untagged' }), or its declarations would find no handler.`,
    );
  });

  it('finds tagged handlers and executors and indexes them by type, alias and item type', async () => {
    const explorer = await explore(SearchHandler, SearchExecutor, FunctionToolHandler, ProbeToolHandler, ProbeExecutor);

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

  it('reads the type from the decorator and refuses one that contradicts the instance', async () => {
    await expect(explore(MislabelledHandler)).rejects.toThrow(/MislabelledHandler is tagged @ToolHandlerProvider\(\{ type: "web_search" \}\) but its instance says "web_fetch"/);
  });

  it('refuses a decorator without a type', async () => {
    await expect(explore(KeylessHandler)).rejects.toThrow(/KeylessHandler is tagged @ToolHandlerProvider\(\) without a type/);
  });

  it('refuses a request-scoped provider at boot instead of skipping it', async () => {
    await expect(explore(RequestScopedHandler)).rejects.toThrow(/RequestScopedHandler .* request-scoped/);
  });

  it('finds input item providers, apart from tools, in the same item-type namespace', async () => {
    const explorer = await explore(SearchHandler, SummaryNoteItem);
    expect(explorer.inputItemHandler('summary_note')).toBeInstanceOf(SummaryNoteItem);
    expect(explorer.handlerForItemType('summary_note')).toBeUndefined();
    expect(explorer.inputItemHandler('web_search_call')).toBeUndefined();
    await expect(explore(SearchHandler, SearchCallItem)).rejects.toThrow(/item type "web_search_call" is claimed twice/);
    await expect(explore(SearchCallItem, SearchHandler)).rejects.toThrow(/item type "web_search_call" is claimed twice/);
  });

  it('indexes tool_choice types and refuses a second claim on one', async () => {
    const explorer = await explore(SearchWithChoiceHandler);
    expect(explorer.handlerForChoiceType('web_search')).toBeInstanceOf(SearchWithChoiceHandler);
    await expect(explore(SearchWithChoiceHandler, SearchChoiceHandler)).rejects.toThrow(/tool_choice type "web_search" is claimed twice/);
  });

  it('builds the same checked index from providers made by hand', () => {
    expect(ToolHandlerExplorer.of({ handlers: [new SearchHandler()], inputItems: [new SummaryNoteItem()] }).inputItemHandler('summary_note')).toBeInstanceOf(SummaryNoteItem);
    expect(() => ToolHandlerExplorer.of({ handlers: [new SearchHandler()], inputItems: [new SearchCallItem()] })).toThrow(/claimed twice/);
    expect(() => ToolHandlerExplorer.of({ handlers: [new FunctionToolHandler()], executors: [new FunctionExecutor()] })).toThrow(/client-owned/);
  });
});
