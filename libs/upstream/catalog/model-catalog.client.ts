import { type Observable, defer } from 'rxjs';
import type { ModelEvent, ModelRequest } from '#core/protocol/model-events.js';
import type { InferOptions, ModelInfo, TokenizeRequest, UpstreamClient } from '#core/upstream/upstream-client.interface.js';
import { canRelay, type RelayBody, type RelayCall, type RelayingUpstream } from '#core/upstream/upstream-relay.interface.js';
import { UpstreamUnavailableError } from '#tool-sdk/errors.js';
import type { CatalogModel, ModelCatalog } from './model-catalog.js';
import { renamedRelayBody } from './renamed-relay-body.js';

/**
 * The upstream as clients see it through the model catalog: a public name is
 * sent to the model server as its `upstreamModel` (the loop, the responses,
 * relayed answers and the request log keep the public name), an entry's `maxOutputTokens`
 * caps the budget, and the model list shows the catalog's names with their
 * metadata, so that the context-length lookup (`ModelContextService`) fits
 * budgets to the catalog's window.
 */
export class ModelCatalogClient implements UpstreamClient, RelayingUpstream {
  readonly dialect: 'responses' | 'chat';

  constructor(
    private readonly inner: UpstreamClient & { close?(): void },
    private readonly catalog: ModelCatalog,
  ) {
    this.dialect = inner.dialect;
  }

  infer(request: ModelRequest, options?: InferOptions): Observable<ModelEvent> {
    return defer(() => this.inner.infer(this.forUpstream(request), options));
  }

  tokenize(request: TokenizeRequest, signal?: AbortSignal): Promise<number | null> {
    if (!this.inner.tokenize) return Promise.resolve(null);
    return this.inner.tokenize({ ...request, model: this.catalog.upstreamName(request.model) }, signal);
  }

  probe(signal?: AbortSignal): Promise<void> {
    return this.inner.probe(signal);
  }

  /** The call goes to the server under its own name; the answer comes back under the name the client asked for. */
  async relay(call: RelayCall): Promise<RelayBody> {
    if (!canRelay(this.inner)) throw new UpstreamUnavailableError('This upstream client cannot pass calls through.', 'upstream_unavailable');
    const model = this.catalog.upstreamName(call.model);
    if (model === call.model) return this.inner.relay(call);
    return renamedRelayBody(await this.inner.relay({ ...call, model, body: { ...call.body, model } }), call.model);
  }

  /**
   * The catalog's models first, each with its metadata (what it lacks is
   * taken from the model server's entry for its `upstreamModel`), then every
   * model the server lists under a name the catalog does not use, with what
   * the server says (vLLM's `max_model_len`).
   */
  async listModels(signal?: AbortSignal): Promise<ModelInfo[]> {
    let listed: ModelInfo[] = [];
    try {
      listed = await this.inner.listModels(signal);
    } catch (error) {
      // The catalog describes its models without the server; a failing server leaves only them.
      if (this.catalog.size === 0) throw error;
    }
    const byId = new Map(listed.map((model) => [model.id, model]));
    const entries = this.catalog.models.map((model) => catalogEntry(model, byId.get(model.upstreamModel)));
    const others = listed.filter((model) => !this.catalog.find(model.id));
    return [...entries, ...others];
  }

  close(): void {
    this.inner.close?.();
  }

  private forUpstream(request: ModelRequest): ModelRequest {
    const model = this.catalog.find(request.model);
    if (!model) return request;
    const cap = model.maxOutputTokens;
    const budget =
      cap !== undefined && (request.max_output_tokens === null || request.max_output_tokens === undefined || request.max_output_tokens > cap) ? cap : request.max_output_tokens;
    return { ...request, model: model.upstreamModel, max_output_tokens: budget };
  }
}

function windowOf(model: ModelInfo | undefined): number | null {
  const length = model?.max_model_len;
  return typeof length === 'number' && Number.isInteger(length) && length > 0 ? length : null;
}

function catalogEntry(model: CatalogModel, served: ModelInfo | undefined): ModelInfo {
  const window = model.contextWindow ?? windowOf(served);
  return {
    id: model.name,
    object: 'model',
    created: served?.created ?? 0,
    owned_by: served?.owned_by || 'switchyard',
    root: model.upstreamModel,
    max_model_len: window,
    context_window: window,
    max_output_tokens: model.maxOutputTokens ?? window,
    input_modalities: model.inputModalities ?? ['text'],
    reasoning: model.reasoning ?? false,
  };
}
