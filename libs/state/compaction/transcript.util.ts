import { outputText } from '#tool-sdk/helpers/output-text.js';
import type { ModelItem, PublicItem } from '#tool-sdk/items.js';

/** Either form of a transcript item: stored model items and public items render alike. */
export type TranscriptItem = PublicItem | ModelItem;

/** A single huge tool output must not crowd the rest of the conversation out of the summary request. */
const MAX_ITEM_CHARS = 4_000;

/** The brief's estimate: about four characters per token, counted on the JSON the upstream would receive. */
export function estimateTokens(items: readonly TranscriptItem[]): number {
  return Math.ceil(JSON.stringify(items).length / 4);
}

function clip(text: string): string {
  if (text.length <= MAX_ITEM_CHARS) return text;
  const half = Math.floor(MAX_ITEM_CHARS / 2);
  return `${text.slice(0, half)} […${text.length - MAX_ITEM_CHARS} characters left out…] ${text.slice(-half)}`;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const p = part as { type?: string; text?: unknown; refusal?: unknown };
      if (typeof p.text === 'string') return p.text;
      if (typeof p.refusal === 'string') return `[refused: ${p.refusal}]`;
      if (p.type === 'input_image') return '[image]';
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

/**
 * Plain text of a conversation for the summarizing model. Text rather than
 * items because the upstream may be a chat template that rejects tool
 * messages without tool declarations; reasoning is left out, as a model would
 * not be shown it again either. `describeCompaction` reads the summary out of
 * an earlier compaction item.
 */
export function renderTranscript(items: readonly TranscriptItem[], describeCompaction: (item: TranscriptItem) => string): string {
  const lines: string[] = [];
  for (const item of items) {
    const it = item as Record<string, any>;
    switch (item.type) {
      case 'message':
        lines.push(`[${String(it.role)}] ${clip(contentText(it.content))}`);
        break;
      case 'function_call':
        lines.push(`[assistant called tool ${it.namespace ? `${it.namespace}.` : ''}${String(it.name)}] ${clip(String(it.arguments ?? ''))}`);
        break;
      case 'custom_tool_call':
        lines.push(`[assistant called tool ${it.namespace ? `${it.namespace}.` : ''}${String(it.name)}] ${clip(String(it.input ?? ''))}`);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        lines.push(`[tool result] ${clip(outputText(it.output))}`);
        break;
      case 'reasoning':
        break;
      case 'compaction':
        lines.push(`[summary of an earlier part of the conversation] ${describeCompaction(item)}`);
        break;
      default: {
        // Gateway-run tool items (mcp_call, web_search_call...) hold call and result in one object.
        const { id: _id, status: _status, ...rest } = it;
        lines.push(`[${item.type}] ${clip(JSON.stringify(rest))}`);
      }
    }
  }
  return lines.join('\n\n');
}

const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

/**
 * Splits a transcript into the part to summarize and a tail of at most
 * `keep` items kept verbatim. The tail starts at a message and holds no tool
 * output whose call went into the summary: an upstream rejects an output
 * without its call. Null when there is nothing to summarize.
 */
export function splitForCompaction<T extends TranscriptItem>(items: readonly T[], keep: number): { head: T[]; tail: T[] } | null {
  if (items.length === 0) return null;
  // At least one item is summarized, or compaction would change nothing.
  let start = Math.max(1, items.length - keep);
  const isClean = (from: number): boolean => {
    if (items[from].type !== 'message') return false;
    const calls = new Set<string>();
    for (let i = from; i < items.length; i++) {
      const it = items[i] as { type: string; call_id?: unknown };
      if (OUTPUT_TYPES.has(it.type)) {
        if (!calls.has(String(it.call_id))) return false;
      } else if (typeof it.call_id === 'string') {
        calls.add(it.call_id);
      }
    }
    return true;
  };
  while (start < items.length && !isClean(start)) start++;
  return { head: items.slice(0, start), tail: items.slice(start) };
}
