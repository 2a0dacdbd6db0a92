import { Injectable, Optional } from '@nestjs/common';
import {
  firstOfferedToolChoice,
  type GatewayCall,
  type HistoryContext,
  type JsonObject,
  type ModelItem,
  type NormalizedTool,
  type PublicItem,
  type ToolHandler,
  ToolHandlerProvider,
  type ToolStatus,
} from '#tool-sdk/index.js';
import { WebSearchService } from './search/web-search.service.js';
import { queriesOf, searchAction } from './web-search-call.js';
import { validateWebSearchDeclaration, type WebSearchParams } from './web-search-declaration.js';
import { WEB_SEARCH } from './web-search.tool-type.js';

/** The model-visible name of the synthetic search function. */
export const WEB_SEARCH_FUNCTION = 'web_search';

/**
 * `web_search` (and its preview and dated wire tags): gateway-owned. The
 * model sees one synthetic function taking a query, or several to run at
 * once; `WebSearchExecutor` runs them against the configured provider.
 *
 * The function is offered only when a search can actually run: with no
 * provider configured (Codex declares web search on every request) or with
 * `external_web_access: false` (every provider here is the live web), the
 * declaration is accepted and echoed but the model is not shown a tool
 * whose every call would fail. A call it makes anyway still gets an error
 * result and a failed `web_search_call`, never a search.
 */
@Injectable()
@ToolHandlerProvider({ type: WEB_SEARCH })
export class WebSearchToolHandler implements ToolHandler<WebSearchParams, unknown, WebSearchParams> {
  readonly type = WEB_SEARCH;
  readonly aliases = ['web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26'];
  readonly gatewayOwned = true;
  /**
   * A declaration's function follows from its content and the process's provider setting alone, and
   * the executor only reads its parameters: prepared lists may be reused.
   */
  readonly declarationsCacheable = true;
  readonly historyItemTypes = ['web_search_call'];
  readonly itemIdPrefix = 'ws';
  /** `tool_choice: {type}` takes every wire tag the declaration does. */
  readonly toolChoice = firstOfferedToolChoice(WEB_SEARCH, [WEB_SEARCH, ...this.aliases]);

  /** Absent when the handler is used on its own (its unit tests): then the tool is offered. */
  constructor(@Optional() private readonly search?: WebSearchService) {}

  describe(): ToolStatus {
    if (this.search && !this.search.provider) {
      return { runs: false, detail: 'no search provider configured (set WEB_SEARCH_PROVIDER or webSearch.provider): calls get a not_configured error result' };
    }
    return { runs: true, detail: 'runs in the gateway' };
  }

  validate(decl: JsonObject, path: string): WebSearchParams {
    return validateWebSearchDeclaration(decl, path);
  }

  normalize(p: WebSearchParams): NormalizedTool<WebSearchParams>[] {
    return [
      {
        fn: {
          type: 'function',
          name: WEB_SEARCH_FUNCTION,
          description:
            'Search the web for current information. Returns matching pages as title, URL, snippet and date. ' + 'Pass several related queries in "queries" to run them at once.',
          parameters: {
            type: 'object',
            properties: {
              query: { type: 'string', description: 'What to search for, as you would type it into a search engine.' },
              queries: { type: 'array', items: { type: 'string' }, description: 'More queries to run alongside "query".' },
            },
            required: ['query'],
            additionalProperties: false,
          },
        },
        toolName: WEB_SEARCH_FUNCTION,
        executionParams: p,
        hidden: p.externalWebAccess === false || (this.search !== undefined && !this.search.provider),
      },
    ];
  }

  /**
   * Echoed with defaults filled in, as OpenAI echoes it. Dated wire tags are
   * echoed as their undated family: the snapshot date selects nothing here,
   * and schema-strict clients know only the two family names.
   */
  publicDeclaration(p: WebSearchParams, decl: JsonObject): JsonObject {
    const family = String(decl.type).startsWith('web_search_preview') ? 'web_search_preview' : 'web_search';
    const loc = p.userLocation;
    const echoed: JsonObject = {
      type: family,
      search_context_size: p.contextSize,
      user_location: loc ? { type: 'approximate', country: loc.country ?? null, region: loc.region ?? null, city: loc.city ?? null, timezone: loc.timezone ?? null } : null,
    };
    if (p.allowedDomains || p.blockedDomains) {
      echoed.filters = { ...(p.allowedDomains ? { allowed_domains: p.allowedDomains } : {}), ...(p.blockedDomains ? { blocked_domains: p.blockedDomains } : {}) };
    }
    if (p.externalWebAccess !== undefined) echoed.external_web_access = p.externalWebAccess;
    return echoed;
  }

  /** Only reached when a host loads this handler without `WebSearchExecutor`. */
  unboundCallItem(call: GatewayCall): PublicItem {
    return { type: 'web_search_call', id: call.itemId, status: 'failed', action: searchAction(queriesOf(call.arguments), undefined) };
  }

  /**
   * A `web_search_call` sent back by a client (stateless conversations) as the
   * model saw it: the call, and an output saying the results are gone. The
   * public item keeps queries and sources only, never result text; with
   * `previous_response_id` the stored transcript carries the real output.
   */
  toModelItems(item: PublicItem, ctx: HistoryContext): ModelItem[] {
    const it = item as JsonObject;
    const action = (it.action ?? {}) as JsonObject;
    const queries =
      Array.isArray(action.queries) && action.queries.length > 0
        ? action.queries.filter((q): q is string => typeof q === 'string')
        : typeof action.query === 'string'
          ? [action.query]
          : [];
    const args: JsonObject = { query: queries[0] ?? '' };
    if (queries.length > 1) args.queries = queries;
    const sources = Array.isArray(action.sources) ? action.sources.map((s) => (s as JsonObject)?.url).filter((u): u is string => typeof u === 'string') : [];
    const callId = String(it.id);
    const output =
      it.status === 'failed'
        ? { error: { code: 'search_failed', message: 'This search failed.' } }
        : { note: 'The results of this earlier search were not kept; search again if you need them.', ...(sources.length ? { sources } : {}) };
    return [
      { type: 'function_call', call_id: callId, name: ctx.modelNameFor(WEB_SEARCH_FUNCTION) ?? WEB_SEARCH_FUNCTION, arguments: JSON.stringify(args) },
      { type: 'function_call_output', call_id: callId, output: JSON.stringify(output) },
    ];
  }
}
