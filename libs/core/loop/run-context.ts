import type { GatewayConfig } from '#config/gateway-config.js';
import type { UpstreamClient } from '../upstream/upstream-client.interface.js';
import type { MessageFiles } from '#tool-sdk/ports/message-files.interface.js';
import { InvalidRequestError } from '#tool-sdk/errors.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { ModelItem, Usage } from '#tool-sdk/items.js';
import type { Cancellation } from '../protocol/cancellation.js';
import type { FlowGate } from '../protocol/flow-gate.js';
import { resolveToolChoice, type ResolvedToolChoice } from '../registry/tool-choice.resolver.js';
import type { ToolPreparationService } from '../registry/tool-preparation.service.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { RequestToolContext } from '#tool-sdk/request-local.js';
import type { ToolRequestContext } from '#tool-sdk/contract/index.js';
import type { GatewayScheduler } from './gateway-scheduler.service.js';
import { HistoryTranslator, type ApprovalSlot } from './history-to-model.js';
import type { ModelContextService } from './model-context.service.js';
import { assertOutputsAnswerCalls } from './orphan-outputs.js';
import type { PriorState, ResponseRequest } from './response-request.js';
import type { ResponseStateStore } from './response-state.interface.js';
import type { RunTrace } from './run-observer.interface.js';
import type { ReasoningSealer } from './reasoning-sealer.interface.js';

/** The services a run uses; the same for every run of one gateway. */
export interface RunServices {
  readonly upstream: UpstreamClient;
  readonly preparation: ToolPreparationService;
  readonly scheduler: GatewayScheduler;
  readonly explorer: ToolHandlerExplorer;
  readonly config: GatewayConfig;
  readonly contexts?: ModelContextService;
  /** Seals and opens reasoning items' `encrypted_content`, when the state module provides it. */
  readonly reasoning?: ReasoningSealer;
  /** Resolves the files messages carry (`input_file`, `input_image` by id) for the model. */
  readonly messageFiles?: MessageFiles;
}

/** What one run is, fixed once its request is known: nothing here changes while it runs. */
export interface RunContext {
  readonly services: RunServices;
  readonly id: string;
  /** The effective request: references resolved, tools inherited by a continuation. */
  readonly request: ResponseRequest;
  readonly state: ResponseStateStore;
  readonly prior: PriorState;
  readonly registry: ToolRegistry;
  readonly choice: ResolvedToolChoice;
  /** Where this turn begins in the transcript: what is saved as the turn's own items. */
  readonly turnStart: number;
  /** The model's context length, when `max_output_tokens` must be fitted to it. */
  readonly contextLength: number | null;
  /** The request as its tool types see it in `discover` and `execute`: one object for both. */
  readonly toolRequest: ToolRequestContext;
  /** Streaming runs: lets a slow client hold back the upstream read. */
  readonly flow?: FlowGate;
  /** Logs, metrics and traces of this run, when a `RUN_OBSERVER` is installed. */
  readonly trace?: RunTrace;
  /** True once the client went away (the run was unsubscribed): traces say "cancelled", not "failed". */
  readonly abandoned: () => boolean;
  /** The owner's token budgets, checked before each upstream call after the first with what the run used so far. */
  readonly budget?: (spent: Usage) => Promise<void>;
}

/** What preparation gives the driver: the context, the transcript so far, and the approval answers to resolve first. */
export interface PreparedRun {
  readonly ctx: RunContext;
  readonly transcript: readonly ModelItem[];
  readonly approvals: readonly ApprovalSlot[];
}

export type RunEdge = Pick<RunContext, 'services' | 'id' | 'state' | 'flow' | 'trace' | 'abandoned' | 'budget'>;

/**
 * The request as the run will see it: `item_reference` items become the
 * stored items they name, the continued response is loaded, and a
 * continuation that does not mention `tools` keeps the previous response's
 * tools, and then its tool_choice too unless it sends one (a stored choice
 * naming a tool only makes sense with the stored tools).
 */
export async function effectiveRequest(edge: RunEdge, received: ResponseRequest): Promise<{ request: ResponseRequest; prior: PriorState }> {
  let request = received;
  const index = request.input.findIndex((item) => item.type === 'item_reference');
  if (index >= 0) {
    if (!edge.state.resolveReferences) {
      throw new InvalidRequestError(`input[${index}] is an item_reference, but this gateway stores no items to resolve it against.`, `input[${index}].id`, 'item_not_found');
    }
    request = { ...request, input: await edge.state.resolveReferences(request) };
  }
  const prior: PriorState = (await edge.state.load(request)) ?? { modelItems: [], publicItems: [] };
  assertOutputsAnswerCalls(request.input, prior.publicItems, prior.modelItems, edge.services.explorer.callOutputTypes());
  if (prior.tools && !request.toolsSupplied && request.tools.length === 0) {
    const toolChoice = request.toolChoiceSupplied || prior.toolChoice === undefined ? request.toolChoice : prior.toolChoice;
    // Inheriting no tools and the choice it already has changes nothing: no copy of the request's every field.
    if (prior.tools.length > 0 || toolChoice !== request.toolChoice) request = { ...request, tools: prior.tools, toolChoice };
  }
  return { request, prior };
}

/**
 * Tools prepared (declarations validated, servers listed), the history
 * translated for the model, and the context fixed. `cancel` aborts the
 * discovery I/O; it is derived from unsubscription by the caller. Its
 * `AbortSignal` is read only by the steps that use one (a server's
 * listing, a file read), so a run that has none makes none.
 */
export async function prepareRun(edge: RunEdge, request: ResponseRequest, prior: PriorState, cancel: Cancellation): Promise<PreparedRun> {
  const { services } = edge;
  const toolRequest = new RequestToolContext(edge.id, request.owner ?? null);
  const registry = await services.preparation.prepare(request.tools, {
    request: toolRequest,
    history: [...prior.publicItems, ...request.input],
    inputStart: prior.publicItems.length,
    get signal() {
      return cancel.signal;
    },
    requestId: edge.id,
    owner: request.owner,
    trace: edge.trace,
    toolsSource: request.toolsSource,
  });
  const choice = resolveToolChoice(request.toolChoice, registry, services.explorer);
  const transcript: ModelItem[] = [...prior.modelItems];
  const translator = new HistoryTranslator(registry, services.explorer, services.reasoning);
  // Approval answers in prior items were resolved in their own turn: their slots are dropped.
  if (prior.untranslated?.length) {
    // A conversation's earlier items are stored as sent: their files are read again for the model.
    const earlier = services.messageFiles ? await services.messageFiles.resolve(prior.untranslated, readerOf(request, cancel)) : prior.untranslated;
    translator.translate(earlier, transcript, []);
  }
  const turnStart = transcript.length;
  const approvals: ApprovalSlot[] = [];
  const input = services.messageFiles ? await services.messageFiles.resolve(request.input, readerOf(request, cancel)) : request.input;
  translator.translate(input, transcript, approvals);
  // Only a turn that generates asks for the model's context length.
  const fitted = request.maxOutputTokens !== null || request.truncation === 'auto';
  const contextLength = request.generate !== false && fitted && services.contexts ? await services.contexts.contextLength(request.model) : null;
  // Written out rather than spread from `edge`: a spread then grown by seven more members took
  // half of this function's time; a literal is made in one piece with its final shape. The type
  // makes every member of the edge, optional ones too, a member this literal must name.
  const ctx: RunContext & { [K in keyof Required<RunEdge>]: RunEdge[K] } = {
    services: edge.services,
    id: edge.id,
    state: edge.state,
    flow: edge.flow,
    trace: edge.trace,
    abandoned: edge.abandoned,
    budget: edge.budget,
    request,
    prior,
    registry,
    choice,
    turnStart,
    contextLength,
    toolRequest,
  };
  return { ctx, transcript, approvals };
}

/** The files reader's caller: the request's owner, and the run's signal made only if a file is read. */
function readerOf(request: ResponseRequest, cancel: Cancellation): { owner: string | null; readonly signal: AbortSignal } {
  return {
    owner: request.owner,
    get signal() {
      return cancel.signal;
    },
  };
}
