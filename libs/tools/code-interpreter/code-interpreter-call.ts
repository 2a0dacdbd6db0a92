import type { JsonObject } from '../../core/protocol/items.js';

/** What the model sees: one function taking the program. */
export const CODE_INTERPRETER_FUNCTION = 'code_interpreter';

export const OUTPUTS_INCLUDE = 'code_interpreter_call.outputs';

/** What the executor keeps of one call for its public item. */
export interface CodeInterpreterCallData {
  code: string;
  containerId: string;
  logs: string;
  images: Array<{ fileId: string; url: string }>;
  files: Array<{ fileId: string; path: string }>;
}

/** The model's arguments: `{"code": "..."}`; a model that sends bare code is taken at its word. */
export function codeOf(args: string): string {
  const trimmed = args.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed = JSON.parse(trimmed) as { code?: unknown; input?: unknown };
      if (typeof parsed.code === 'string') return parsed.code;
      if (typeof parsed.input === 'string') return parsed.input;
      return '';
    } catch {
      // not JSON after all: the code itself
    }
  }
  return args;
}

/** `outputs` of a `code_interpreter_call`: logs first, then images, as OpenAI orders them. */
export function publicOutputs(data: CodeInterpreterCallData | undefined): JsonObject[] {
  if (!data) return [];
  const outputs: JsonObject[] = [];
  if (data.logs) outputs.push({ type: 'logs', logs: data.logs });
  for (const image of data.images) outputs.push({ type: 'image', url: image.url });
  return outputs;
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml' };

export function imageMediaType(path: string): string | undefined {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return IMAGE_TYPES[ext];
}
