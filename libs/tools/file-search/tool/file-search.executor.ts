import { Inject, Injectable } from '@nestjs/common';
import {
  type ExecutionContext,
  type GatewayCall,
  type GatewayCallResult,
  GatewayError,
  type GatewayEventPlan,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type PublicItem,
  type ToolOutput,
} from '#tool-sdk/index.js';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings } from '../config/file-search-settings.js';
import { FileSearchService } from '../retrieval/file-search.service.js';
import { FileSearchStore } from '../storage/file-search.store.js';
import { RESULTS_INCLUDE, findCitations, parseQueries, publicResults, queriesOf, resultsForModel, type FileSearchCallData } from './file-search-call.js';
import type { FileSearchParams } from '../file-search.tool-handler.js';
import { FILE_SEARCH } from '../file-search.tool-type.js';

function errorOutput(code: string, message: string, queries: string[]): ToolOutput {
  return { text: JSON.stringify({ error: { code, message } }), isError: true, data: { queries, results: [] } satisfies FileSearchCallData };
}

/**
 * Runs `file_search` calls against the declared vector stores and shapes
 * the public `file_search_call`: `output_item.added` (in_progress) →
 * `.in_progress` → `.searching` → (search) → `.completed` →
 * `output_item.done`. As with web search there is no `.failed` event in
 * OpenAI's set; a failed call ends with `.completed` and `status: "failed"`.
 * An unknown store id fails the call (the model reads why), not the request;
 * so does another owner's store, told apart from an unknown one by nothing.
 */
@Injectable()
@GatewayExecutorProvider({ type: FILE_SEARCH })
export class FileSearchExecutor implements GatewayExecutor<FileSearchParams> {
  readonly type = FILE_SEARCH;

  constructor(
    private readonly retrieval: FileSearchService,
    private readonly store: FileSearchStore,
    @Inject(FILE_SEARCH_SETTINGS) private readonly settings: FileSearchSettings,
  ) {}

  /** Searches only read: a model's parallel searches may overlap. */
  supportsParallelExecution(): boolean {
    return true;
  }

  async execute(call: GatewayCall, params: FileSearchParams, ctx: ExecutionContext): Promise<ToolOutput> {
    try {
      return await this.search(call, params, ctx);
    } catch (e) {
      // The store's outage is the call's failure, told to the model in words it can act on; the request goes on.
      if (e instanceof GatewayError && e.code === 'store_unavailable') {
        return errorOutput('store_unavailable', 'The file search index cannot be reached right now; answer without it or try again later.', queriesOf(call.arguments));
      }
      throw e;
    }
  }

  private async search(call: GatewayCall, params: FileSearchParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const parsed = parseQueries(call.arguments, this.settings.maxQueriesPerSearch);
    if ('error' in parsed) return errorOutput('invalid_arguments', parsed.error, []);
    const { queries } = parsed;
    // Without an owner from discovery nothing is searchable: the call fails rather than search unscoped.
    const owned = params.owner === undefined ? new Set<string>() : await this.store.ownedStoreIds(params.vectorStoreIds, params.owner);
    const missing = params.vectorStoreIds.filter((id) => !owned.has(id));
    if (missing.length > 0) {
      return errorOutput('vector_store_not_found', `No vector store found with id ${missing.map((m) => `'${m}'`).join(', ')}.`, queries);
    }
    const found = await this.retrieval.search({
      storeIds: params.vectorStoreIds,
      queries,
      filter: params.filter,
      maxNumResults: params.maxNumResults,
      scoreThreshold: params.scoreThreshold,
      weights: params.weights,
      signal: ctx.signal,
    });
    await this.store.touchStores(params.vectorStoreIds, Math.floor(Date.now() / 1000));
    const results = publicResults(found);
    return { text: resultsForModel(queries, results, this.settings.resultBudgetChars), data: { queries, results } satisfies FileSearchCallData };
  }

  /**
   * `file_citation` annotations: each place the answer names a searched
   * file, by id or by filename, cites that file. The model is shown both
   * with every result; naming the source is what the tool asks of it.
   */
  annotateText(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>> {
    const files = new Map<string, string>();
    for (const r of results) for (const hit of (r.output.data as FileSearchCallData | undefined)?.results ?? []) files.set(hit.file_id, hit.filename);
    return findCitations(text, files);
  }

  planEvents(call: GatewayCall): GatewayEventPlan {
    return {
      startedItem: { type: 'file_search_call', id: call.itemId, status: 'in_progress', queries: queriesOf(call.arguments), results: null },
      beforeExecute: [{ type: 'response.file_search_call.in_progress' }, { type: 'response.file_search_call.searching' }],
      afterExecute: () => [{ type: 'response.file_search_call.completed' }],
    };
  }

  publicOutput(result: GatewayCallResult, _params: FileSearchParams, ctx: { include: readonly string[] }): PublicItem {
    const data = result.output.data as FileSearchCallData | undefined;
    const queries = data?.queries.length ? data.queries : queriesOf(result.call.arguments);
    const failed = result.status !== 'completed' || result.output.isError === true;
    return {
      type: 'file_search_call',
      id: result.call.itemId,
      status: failed ? 'failed' : 'completed',
      queries,
      results: ctx.include.includes(RESULTS_INCLUDE) && !failed ? (data?.results ?? []) : null,
    };
  }
}
