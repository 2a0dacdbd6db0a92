import type { ToolHandlerExplorer } from '../handlers/tool-handler.explorer.js';
import type { ContentPart, ModelItem, PublicItem } from '../protocol/items.js';
import { modelVisibleName } from '../registry/model-names.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

/** Marks where an approval response sits, so its call output lands at that point in the transcript. */
export interface ApprovalSlot {
  position: number;
  approvalRequestId: string;
  approve: boolean;
  reason: string | null;
}

/**
 * Rewrites public conversation items into what a function-calling-only model
 * understands: custom and namespaced calls become functions under their
 * model-visible names, gateway items become call/output pairs (through their
 * tool module), and everything else passes as is.
 */
export class HistoryTranslator {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly explorer: ToolHandlerExplorer,
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
      case 'function_call':
        into.push({ type: 'function_call', call_id: it.call_id, name: this.functionName(it.name, it.namespace), arguments: it.arguments ?? '' });
        return;
      case 'custom_tool_call':
        into.push({
          type: 'function_call',
          call_id: it.call_id,
          name: this.customName(it.name, it.namespace),
          arguments: JSON.stringify({ input: it.input ?? '' }),
        });
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        into.push({ type: 'function_call_output', call_id: it.call_id, output: outputText(it.output) });
        return;
      case 'reasoning':
        into.push({ type: 'reasoning', summary: it.summary ?? [], content: it.content ?? [], encrypted_content: it.encrypted_content ?? null });
        return;
      case 'mcp_approval_response':
        approvals.push({ position: into.length, approvalRequestId: it.approval_request_id, approve: it.approve === true, reason: it.reason ?? null });
        return;
      default: {
        const handler = this.explorer.handlerForItemType(item.type);
        if (handler?.toModelItems) {
          into.push(
            ...handler.toModelItems(item, {
              modelNameFor: (toolName, scope) => this.registry.findByIdentity(handler.type, toolName, scope)?.modelName,
            }),
          );
        }
        // Items no module claims carry nothing the model can use (e.g. discovery listings).
      }
    }
  }

  private functionName(name: string, namespace?: string | null): string {
    if (!namespace) return name;
    return this.registry.findByIdentity('namespace', name, namespace)?.modelName ?? modelVisibleName([namespace, name], new Set());
  }

  private customName(name: string, namespace?: string | null): string {
    if (namespace) return this.functionName(name, namespace);
    return this.registry.findByIdentity('custom', name)?.modelName ?? name;
  }
}

/** Function outputs may be content parts; a function-calling model reads text. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return (output as ContentPart[]).map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  }
  return output == null ? '' : JSON.stringify(output);
}
