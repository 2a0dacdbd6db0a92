import type { PriorState, ResponseRequest } from '#core/loop/response-request.js';
import type { CompletedRun, ResponseStateStore } from '#core/loop/response-state.interface.js';
import type { PublicItem } from '#tool-sdk/items.js';
import type { CompactionService } from '../compaction/compaction.service.js';
import { resolveItemReferences } from '../persistence/item-references.util.js';
import type { SocketResponseCache } from './socket-response-cache.js';

/**
 * The state store one WebSocket runs its responses with: its own recent
 * responses first (stored or not), then the shared store. Saving goes to both.
 */
export class SocketScopedResponseState implements ResponseStateStore {
  constructor(
    private readonly shared: ResponseStateStore,
    private readonly cache: SocketResponseCache,
    private readonly compaction: CompactionService,
  ) {}

  async load(request: ResponseRequest): Promise<PriorState | null> {
    const cached = request.previousResponseId ? this.cache.get(request.previousResponseId) : undefined;
    if (cached) return this.compaction.autoCompact(cached, request);
    return this.shared.load(request);
  }

  /** References name stored items; a socket's unstored responses are continued by id instead. */
  async resolveReferences(request: ResponseRequest): Promise<PublicItem[]> {
    if (!this.shared.resolveReferences) return resolveItemReferences(request.input, async () => new Map());
    return this.shared.resolveReferences(request);
  }

  async save(run: CompletedRun): Promise<void> {
    // The shared store first: if it refuses (a deleted conversation), the run fails and nothing is cached.
    await this.shared.save(run);
    const output = Array.isArray(run.response.output) ? (run.response.output as PublicItem[]) : [];
    this.cache.put(run.response.id as string, {
      modelItems: [...(run.prior?.modelItems ?? []), ...run.modelItems],
      publicItems: [...(run.prior?.publicItems ?? []), ...run.request.input, ...output],
      // The request's own declarations, credentials included: they never leave
      // this process and die with the socket, and an inherited MCP tool needs them.
      tools: run.request.tools,
      toolChoice: run.request.toolChoice,
    });
  }

  /** A failed continuation must not be retried from state that may have led to the failure. */
  async discard(request: ResponseRequest, responseId: string): Promise<void> {
    this.evict(request);
    await this.shared.discard?.(request, responseId);
  }

  evict(request: Pick<ResponseRequest, 'previousResponseId'>): void {
    if (request.previousResponseId) this.cache.evict(request.previousResponseId);
  }
}
