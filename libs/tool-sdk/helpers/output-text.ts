import type { ContentPart } from '../items.js';

/** Function outputs may be content parts; a function-calling model reads text. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return (output as ContentPart[]).map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  }
  return output == null ? '' : JSON.stringify(output);
}
