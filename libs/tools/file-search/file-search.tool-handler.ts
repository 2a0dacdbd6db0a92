import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  type DiscoveryContext,
  type DiscoveryResult,
  firstOfferedToolChoice,
  type GatewayCall,
  type HistoryContext,
  InvalidRequestError,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
  validation,
  type ToolStatus,
} from '#tool-sdk/index.js';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings } from './config/file-search-settings.js';
import { parseRankingOptions } from './api/vector-stores.service.js';
import { parseAttributeFilter, type AttributeFilter } from './retrieval/attribute-filter.js';
import { ownerOf, type Owner } from './storage/file-search-rows.js';
import { queriesOf } from './tool/file-search-call.js';
import { FILE_SEARCH } from './file-search.tool-type.js';

export interface FileSearchParams {
  vectorStoreIds: string[];
  maxNumResults: number;
  filter?: AttributeFilter;
  scoreThreshold: number;
  weights?: { text: number; embedding: number };
  /**
   * Whose stores the calls may search: the request's owner, set by
   * discovery. Another owner's store id fails the call as an unknown one.
   */
  owner?: Owner;
}

interface Discovered {
  owner: Owner;
}

/** Stores one declaration may search; far above OpenAI's own limit, still a bound on one call's fan-out. */
export const MAX_VECTOR_STORES = 100;

/**
 * `file_search`: validated here, offered to the model as one function that
 * takes a list of queries, and executed in the gateway by
 * `FileSearchExecutor`.
 */
@Injectable()
@ToolHandlerProvider({ type: FILE_SEARCH })
export class FileSearchToolHandler implements ToolHandler<FileSearchParams, Discovered, FileSearchParams> {
  readonly type = FILE_SEARCH;
  readonly gatewayOwned = true;
  readonly historyItemTypes = ['file_search_call'];
  readonly itemIdPrefix = 'fs';
  readonly toolChoice = firstOfferedToolChoice(FILE_SEARCH, [FILE_SEARCH]);

  private readonly maxQueries: number;
  /** Set by the module when the index cannot open (its database driver is not installed): why, for the start-up summary. */
  unavailable?: string;

  /** Settings are optional so that core's own tests can build the handler alone. */
  constructor(@Optional() @Inject(FILE_SEARCH_SETTINGS) private readonly settings?: FileSearchSettings) {
    this.maxQueries = settings?.maxQueriesPerSearch ?? 100;
  }

  /** Whether `hybrid_search` weights can mean anything: embeddings are configured (or, in core's own tests, nothing says they are not). */
  private get hybridAvailable(): boolean {
    return !this.settings || this.settings.embeddings !== undefined;
  }

  /** Whether retrieval is hybrid: an operator's first question when results look lexical. */
  describe(): ToolStatus {
    if (this.unavailable) return { runs: false, detail: this.unavailable };
    const model = this.settings?.embeddings?.model;
    return model
      ? { runs: true, detail: `runs in the gateway: hybrid retrieval (BM25 + embeddings model ${model})` }
      : { runs: true, detail: 'runs in the gateway: lexical retrieval (BM25) only (set FILE_SEARCH_EMBEDDING_MODEL for hybrid)' };
  }

  validate(decl: JsonObject, path: string): FileSearchParams {
    const ids = decl.vector_store_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.some((v) => typeof v !== 'string' || v === '')) {
      throw new InvalidRequestError(`${path}.vector_store_ids is required: a non-empty array of vector store ids.`, `${path}.vector_store_ids`);
    }
    if (ids.length > MAX_VECTOR_STORES) {
      throw new InvalidRequestError(`${path}.vector_store_ids may list at most ${MAX_VECTOR_STORES} stores.`, `${path}.vector_store_ids`);
    }
    const filters = decl.filters;
    return {
      vectorStoreIds: [...new Set(ids as string[])],
      maxNumResults: validation.optionalInteger(decl, 'max_num_results', path, 1, 50) ?? 10,
      filter: filters === undefined || filters === null ? undefined : parseAttributeFilter(filters, `${path}.filters`),
      ...parseRankingOptions(decl.ranking_options, `${path}.ranking_options`, this.hybridAvailable),
    };
  }

  /** Nothing to discover: this is where the contract tells a handler whose request it serves. */
  async discover(_p: FileSearchParams, ctx: DiscoveryContext): Promise<DiscoveryResult<Discovered>> {
    return { state: { owner: ownerOf(ctx.owner) } };
  }

  normalize(p: FileSearchParams, discovered?: Discovered): NormalizedTool<FileSearchParams>[] {
    return [
      {
        fn: {
          type: 'function',
          name: 'file_search',
          description:
            'Search the files the user attached for passages relevant to the queries. Each result is labelled with its file_id and filename; ' +
            'name the filename of each file your answer uses.',
          parameters: {
            type: 'object',
            properties: {
              queries: {
                type: 'array',
                items: { type: 'string' },
                description: `One to ${this.maxQueries} search queries, each a short phrase or question.`,
              },
            },
            required: ['queries'],
            additionalProperties: false,
          },
        },
        toolName: 'file_search',
        executionParams: { ...p, owner: discovered?.owner } satisfies FileSearchParams,
      },
    ];
  }

  unboundCallItem(call: GatewayCall, error: { code: string; message: string }): PublicItem {
    return { type: 'file_search_call', id: call.itemId, status: 'failed', queries: queriesOf(call.arguments), results: null, error: error.message };
  }

  /** A past call as the model saw it: its queries, and its results when they were kept in the item. */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const callId = String(it.id);
    const results = Array.isArray(it.results) ? it.results : null;
    return [
      { type: 'function_call', call_id: callId, name: ctx.modelNameFor('file_search') ?? 'file_search', arguments: JSON.stringify({ queries: it.queries ?? [] }) },
      {
        type: 'function_call_output',
        call_id: callId,
        output: results ? JSON.stringify(results) : 'The results of this earlier search were not kept; search again if they are needed.',
      },
    ];
  }
}
