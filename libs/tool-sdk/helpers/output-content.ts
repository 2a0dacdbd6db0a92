import type { ContentPart } from '../items.js';
import { outputText } from './output-text.js';

/** Parts a text-only transcript cannot carry: the model must be shown them as they are. */
const MEDIA_PART_TYPES: ReadonlySet<string> = new Set(['input_image', 'input_file']);

export function isMediaPart(part: unknown): boolean {
  return typeof part === 'object' && part !== null && MEDIA_PART_TYPES.has((part as { type?: unknown }).type as string);
}

/**
 * A tool output as the model is shown it. An output with an image or a file
 * (Codex `view_image`, Claude Code's `Read` of a PNG, a screenshot) stays a
 * content list, so the upstream mappers pass the media on; text alone is
 * joined as `outputText` joins it, so text-only outputs reach the model as
 * the same bytes as before.
 */
export function outputContent(output: unknown): string | ContentPart[] {
  if (Array.isArray(output) && output.some(isMediaPart)) return output as ContentPart[];
  return outputText(output);
}
