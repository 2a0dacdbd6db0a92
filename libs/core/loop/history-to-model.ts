import { outputContent } from '#tool-sdk/helpers/output-content.js';
import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { AnyToolHandler, ApprovalAnswer, HistoryContext } from '#tool-sdk/contract/index.js';
import type { ModelItem, PublicItem } from '#tool-sdk/items.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { ReasoningSealer } from './reasoning-sealer.interface.js';

/** Marks where an approval answer sits, so its call output lands at that point in the transcript. */
export interface ApprovalSlot {
  position: number;
  /** The tool module whose approval contract reads and decides the answer. */
  handler: AnyToolHandler;
  /** The answer item's type, for errors that name it. */
  itemType: string;
  answer: ApprovalAnswer;
}

/**
 * Rewrites public conversation items into what a function-calling-only model
 * understands. Messages, reasoning and function outputs are the model's own
 * protocol and pass through; every other item type belongs to the module
 * that claims it (a tool's history items and approval answers, or another
 * module's input item), which says what the model sees. Items no module
 * claims carry nothing the model can use.
 */
export class HistoryTranslator {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly explorer: ToolHandlerExplorer,
    private readonly reasoning?: ReasoningSealer,
  ) {}

  translate(items: readonly PublicItem[], into: ModelItem[], approvals: ApprovalSlot[] = []): void {
    for (const item of items) this.translateOne(item, into, approvals);
  }

  private translateOne(item: PublicItem, into: ModelItem[], approvals: ApprovalSlot[]): void {
    const it = item as Record<string, any>;
    switch (item.type) {
      case 'message':
        into.push({ type: 'message', role: it.role, content: it.content });
        return;
      case 'function_call_output':
        into.push({ type: 'function_call_output', call_id: it.call_id, output: outputContent(it.output) });
        return;
      case 'reasoning':
        into.push(this.reasoningForModel(it));
        return;
    }
    const inputItem = this.explorer.inputItemHandler(item.type);
    if (inputItem) {
      into.push(...inputItem.toModelItems(item));
      return;
    }
    const handler = this.explorer.handlerForItemType(item.type);
    if (!handler) return;
    if (handler.approvals?.answerItemTypes.includes(item.type)) {
      approvals.push({ position: into.length, handler, itemType: item.type, answer: handler.approvals.readAnswer(item) });
      return;
    }
    if (handler.toModelItems) into.push(...handler.toModelItems(item, this.historyContext(handler)));
  }

  /**
   * A reasoning item the gateway sealed (`include: ["reasoning.encrypted_content"]`)
   * is shown to the model as it wrote it: the client holds only the summary
   * it was shown and the token. Other values are the upstream's own and pass on.
   */
  private reasoningForModel(it: Record<string, any>): ModelItem {
    const token = it.encrypted_content;
    if (typeof token === 'string' && this.reasoning?.recognizes(token)) return this.reasoning.open(token, 'input.encrypted_content');
    return { type: 'reasoning', summary: it.summary ?? [], content: it.content ?? [], encrypted_content: token ?? null };
  }

  private historyContext(handler: AnyToolHandler): HistoryContext {
    return {
      modelNameFor: (toolName, scope) => this.registry.findByIdentity(handler.type, toolName, scope)?.modelName,
      clientCallName: (kind, name, scope) => this.registry.findClientCall(kind, name, scope)?.modelName,
    };
  }
}
