import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  type ExecutionContext,
  GATEWAY_CONFIG,
  type GatewayCall,
  type GatewayCallResult,
  GatewayConfig,
  type GatewayEventPlan,
  type GatewayExecutor,
  GatewayExecutorProvider,
  type PublicItem,
  type ToolOutput,
} from '#tool-sdk/index.js';
import { compactResults } from './search/result-budget.js';
import { WebSearchService } from './search/web-search.service.js';
import { RESULTS_INCLUDE, SOURCES_INCLUDE, parseSearchArguments, queriesOf, searchAction, searchResults, urlCitations, type WebSearchCallData } from './web-search-call.js';
import type { WebSearchParams } from './web-search-declaration.js';
import { WEB_SEARCH } from './web-search.tool-type.js';

/** Search is interactive: a provider that needs longer than this is better reported as slow. */
export const DEFAULT_WEB_SEARCH_TIMEOUT_MS = 20_000;

function errorOutput(code: string, message: string, data: WebSearchCallData): ToolOutput {
  return { text: JSON.stringify({ error: { code, message } }), isError: true, data };
}

/**
 * Executes `web_search` calls and shapes their public `web_search_call`
 * lifecycle: `output_item.added` (in_progress) → `.in_progress` →
 * `.searching` → (search) → `.completed` → `output_item.done`.
 *
 * OpenAI defines no `response.web_search_call.failed` event, so a failed
 * search also ends with `.completed` (the lifecycle step that closes the
 * call), and the item's `status: "failed"` in `output_item.done` says how it
 * went. Inventing a `.failed` event would break clients that switch on the
 * known event names.
 */
@Injectable()
@GatewayExecutorProvider({ type: WEB_SEARCH })
export class WebSearchExecutor implements GatewayExecutor<WebSearchParams> {
  readonly type = WEB_SEARCH;
  private readonly logger = new Logger('WebSearch');

  constructor(
    private readonly search: WebSearchService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /** Searches are independent reads: the model's parallel searches may overlap (the provider limit still applies). */
  supportsParallelExecution(): boolean {
    return true;
  }

  /**
   * `webSearch.timeoutMs`, else the operator's `tools.timeoutMsByType.web_search`
   * (returning `undefined` lets core apply it), else a search-sized default
   * rather than the general tool default.
   */
  timeoutMs(): number | undefined {
    if (this.search.settings.timeoutMs !== undefined) return this.search.settings.timeoutMs;
    return this.config.tools.timeoutMsByType?.[WEB_SEARCH] === undefined ? DEFAULT_WEB_SEARCH_TIMEOUT_MS : undefined;
  }

  async execute(call: GatewayCall, params: WebSearchParams, ctx: ExecutionContext): Promise<ToolOutput> {
    const parsed = parseSearchArguments(call.arguments, this.search.settings.maxQueriesPerCall);
    if ('error' in parsed) return errorOutput('invalid_arguments', parsed.error, { queries: [], sources: [] });
    const { queries } = parsed;
    if (params.externalWebAccess === false) {
      return errorOutput(
        'external_web_access_disabled',
        'live web access is switched off for this request (external_web_access: false), and this gateway has no cached index to search.',
        { queries, sources: [] },
      );
    }
    if (!this.search.provider) {
      return errorOutput('not_configured', 'web search is not configured on this gateway (no webSearch.provider is set).', { queries, sources: [] });
    }
    const outcome = await this.search.search({ queries, params, signal: ctx.signal, deadline: ctx.deadline });
    const failures = outcome.perQuery.filter((o) => o.error).map((o) => ({ query: o.query, message: o.error!.message }));
    for (const f of failures) {
      if (!ctx.signal.aborted) this.logger.warn(`request ${ctx.requestId}: query ${JSON.stringify(f.query)} failed: ${f.message}`);
    }
    if (failures.length === queries.length) {
      const message = failures.length === 1 ? failures[0].message : failures.map((f) => `"${f.query}": ${f.message}`).join('; ');
      return errorOutput('search_failed', message, { queries, sources: [] });
    }
    const compacted = compactResults(queries, outcome.results, this.search.settings.resultBudgetChars, failures);
    const titles = Object.fromEntries(compacted.shown.map((r) => [r.url, r.title]));
    const dates = Object.fromEntries(compacted.shown.filter((r) => r.date).map((r) => [r.url, r.date!]));
    return { text: compacted.text, data: { queries, sources: compacted.shown.map((r) => r.url), titles, dates } satisfies WebSearchCallData };
  }

  /** `url_citation` annotations for the pages this response's searches showed the model (`urlCitations`). */
  annotateText(text: string, results: readonly GatewayCallResult[]): Array<Record<string, unknown>> {
    const pages = new Map<string, string>();
    for (const r of results) {
      const data = r.output.data as WebSearchCallData | undefined;
      for (const url of data?.sources ?? []) pages.set(url, data?.titles?.[url] ?? url);
    }
    return urlCitations(text, pages);
  }

  planEvents(call: GatewayCall, _params: WebSearchParams, _ctx: { include: readonly string[] }): GatewayEventPlan {
    return {
      startedItem: {
        type: 'web_search_call',
        id: call.itemId,
        status: 'in_progress',
        action: searchAction(queriesOf(call.arguments).slice(0, this.search.settings.maxQueriesPerCall), undefined),
      },
      beforeExecute: [{ type: 'response.web_search_call.in_progress' }, { type: 'response.web_search_call.searching' }],
      afterExecute: () => [{ type: 'response.web_search_call.completed' }],
    };
  }

  publicOutput(result: GatewayCallResult, _params: WebSearchParams, ctx: { include: readonly string[] }): PublicItem {
    const data = result.output.data as WebSearchCallData | undefined;
    // A call the scheduler ended (timeout, crash) carries no data of ours: fall back to the arguments.
    const queries = data?.queries.length ? data.queries : queriesOf(result.call.arguments).slice(0, this.search.settings.maxQueriesPerCall);
    const sources = ctx.include.includes(SOURCES_INCLUDE) ? (data?.sources ?? []) : undefined;
    const item: PublicItem = {
      type: 'web_search_call',
      id: result.call.itemId,
      status: result.status === 'completed' ? 'completed' : 'failed',
      action: searchAction(queries, sources),
    };
    if (ctx.include.includes(RESULTS_INCLUDE)) (item as Record<string, unknown>).results = searchResults(data);
    return item;
  }
}
