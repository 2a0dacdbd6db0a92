import { Injectable } from '@nestjs/common';
import { InvalidRequestError } from '../../core/errors/gateway-error.js';
import { optionalInteger, optionalObject } from '../../core/handlers/declaration-validation.js';
import { ToolHandlerProvider } from '../../core/handlers/tool-handler.decorators.js';
import type { GatewayCall, HistoryContext, NormalizedTool, ToolHandler } from '../../core/handlers/tool-handler.interface.js';
import type { JsonObject, ModelItem, PublicItem } from '../../core/protocol/items.js';
import { ToolType } from '../../core/tool-types/tool-type.enum.js';

export interface FileSearchParams {
  vectorStoreIds: string[];
  maxNumResults?: number;
  filters?: JsonObject;
}

function parseQueries(args: string): string[] {
  try {
    const parsed = JSON.parse(args) as { queries?: unknown; query?: unknown };
    if (Array.isArray(parsed.queries)) return parsed.queries.filter((q): q is string => typeof q === 'string');
    if (typeof parsed.query === 'string') return [parsed.query];
  } catch {
    // unreadable arguments: no queries to report
  }
  return [];
}

/**
 * `file_search`: gateway-owned, with no executor in this gateway yet. The
 * declaration is validated and routed, but not offered to the model; a call
 * the model makes anyway gets an error result and a failed public item.
 */
@Injectable()
@ToolHandlerProvider()
export class FileSearchToolHandler implements ToolHandler<FileSearchParams> {
  readonly type = ToolType.FileSearch;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['file_search_call'];

  validate(decl: JsonObject, path: string): FileSearchParams {
    const ids = decl.vector_store_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.some((v) => typeof v !== 'string')) {
      throw new InvalidRequestError(`${path}.vector_store_ids is required: a non-empty array of strings.`, `${path}.vector_store_ids`);
    }
    return {
      vectorStoreIds: ids as string[],
      maxNumResults: optionalInteger(decl, 'max_num_results', path, 1, 50),
      filters: optionalObject(decl, 'filters', path),
    };
  }

  normalize(p: FileSearchParams): NormalizedTool[] {
    return [
      {
        fn: {
          type: 'function',
          name: 'file_search',
          description: 'Search the attached files.',
          parameters: { type: 'object', properties: { queries: { type: 'array', items: { type: 'string' } } }, required: ['queries'] },
        },
        toolName: 'file_search',
        executionParams: p,
        hidden: true,
      },
    ];
  }

  unboundCallItem(call: GatewayCall, error: { code: string; message: string }): PublicItem {
    return { type: 'file_search_call', id: call.itemId, status: 'failed', queries: parseQueries(call.arguments), results: null, error: error.message };
  }

  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.id);
    return [
      { type: 'function_call', call_id: callId, name: ctx.modelNameFor('file_search') ?? 'file_search', arguments: JSON.stringify({ queries: it.queries ?? [] }) },
      { type: 'function_call_output', call_id: callId, output: JSON.stringify(it.results ?? { error: 'no results were recorded' }) },
    ];
  }
}
