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

/** The fewest members a gateway type works with: its key, the declaration check, normalisation, execution. */
@Injectable()
@ToolHandlerProvider({ type: 'coin' })
class MinimalCoinHandler implements ToolHandler<{ sides: number }> {
  readonly type = 'coin';
  validate(): { sides: number } {
    return { sides: 2 };
  }
  normalize(): NormalizedTool[] {
    return [{ fn: { type: 'function', name: 'flip', parameters: { type: 'object', properties: {} } }, toolName: 'flip' }];
  }
}

@Injectable()
@GatewayExecutorProvider({ type: 'coin' })
class MinimalCoinExecutor implements GatewayExecutor {
  readonly type = 'coin';
  async execute(): Promise<ToolOutput> {
    return { text: 'heads' };
  }
}

/**
 * Tagged as a plugin's own copy of the package tags it: the same global
 * symbol key, written by another decorator function, and unknown to this
 * copy of Nest's index of decorated classes.
 */
@Injectable()
class OtherCopyHandler extends StubHandler {
  readonly type = 'other_copy';
  readonly gatewayOwned = false;
}
Reflect.defineMetadata(Symbol.for('switchyard-gateway:tool-handler'), { type: 'other_copy' }, OtherCopyHandler);

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

  it('finds a provider tagged by another copy of the package, which shares only the global key', async () => {
    const explorer = await explore(OtherCopyHandler);
    expect(explorer.handlerForType('other_copy')).toBeInstanceOf(OtherCopyHandler);
    expect(ToolHandlerProvider.KEY).toBe(Symbol.for('switchyard-gateway:tool-handler'));
  });

  it('fills in the contract defaults of a type that writes only its key, validate, normalize and execute', async () => {
    const explorer = await explore(MinimalCoinHandler, MinimalCoinExecutor);
    const handler = explorer.handlerForType('coin')!;
    expect(handler.gatewayOwned).toBe(true);
    expect(handler.historyItemTypes).toEqual(['coin_call']);
    expect(explorer.handlerForItemType('coin_call')).toBe(handler);
    const call = { callId: 'c1', itemId: 'coin_1', modelName: 'flip', toolName: 'flip', arguments: '{}' };
    const executor = explorer.executorForType('coin')!;
    expect(executor.planEvents(call, {}, { include: [] }).startedItem).toMatchObject({ type: 'coin_call', id: 'coin_1', status: 'in_progress' });
    const item = executor.publicOutput({ call, status: 'completed', output: { text: 'heads' } }, {}, { include: [] });
    expect(item).toMatchObject({ type: 'coin_call', id: 'coin_1', status: 'completed', output: 'heads' });
    // History of the default item: the call under today's model-visible name, then its output.
    const seen = handler.toModelItems!(item, { modelNameFor: (name) => (name === 'flip' ? 'flip_2' : undefined), clientCallName: () => undefined });
    expect(seen).toEqual([
      { type: 'function_call', call_id: 'coin_1', name: 'flip_2', arguments: '{}' },
      { type: 'function_call_output', call_id: 'coin_1', output: 'heads' },
    ]);
  });

  it('leaves what a module wrote: its own history and item, and a handler without an executor stays client-owned', async () => {
    const explorer = await explore(SearchHandler, SearchExecutor, MinimalCoinHandler);
    expect(explorer.handlerForType('web_search')!.historyItemTypes).toEqual(['web_search_call']);
    expect(explorer.handlerForType('web_search')!.toModelItems).toBeUndefined();
    expect(explorer.executorForType('web_search')!.publicOutput({} as never, {}, { include: [] })).toEqual({ type: 'x' });
    const coin = explorer.handlerForType('coin')!;
    expect(coin.gatewayOwned).toBe(false);
    expect(coin.historyItemTypes).toBeUndefined();
  });

  it('refuses an untagged provider shaped like an executor even when it writes only execute', async () => {
    @Injectable()
    class UntaggedCoinExecutor {
      readonly type = 'coin';
      async execute(): Promise<ToolOutput> {
        return { text: 'tails' };
      }
    }
    await expect(explore(MinimalCoinHandler, UntaggedCoinExecutor)).rejects.toThrow(/UntaggedCoinExecutor is shaped like a GatewayExecutor for "coin" but is not tagged/);
  });

  it('builds the same checked index from providers made by hand', () => {
    expect(ToolHandlerExplorer.of({ handlers: [new SearchHandler()], inputItems: [new SummaryNoteItem()] }).inputItemHandler('summary_note')).toBeInstanceOf(SummaryNoteItem);
    expect(() => ToolHandlerExplorer.of({ handlers: [new SearchHandler()], inputItems: [new SearchCallItem()] })).toThrow(/claimed twice/);
    expect(() => ToolHandlerExplorer.of({ handlers: [new FunctionToolHandler()], executors: [new FunctionExecutor()] })).toThrow(/client-owned/);
  });
});
