import type { JsonObject } from '#core/protocol/items.js';

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

/**
 * `container_file_citation` annotations: each place the answer names a file
 * a run wrote (by its `/mnt/data/...` path, or by file id), cites that
 * container file, as OpenAI's answers cite the files code interpreter made.
 */
export function containerFileCitations(text: string, calls: readonly CodeInterpreterCallData[]): Array<Record<string, unknown>> {
  const citations: Array<Record<string, unknown>> = [];
  for (const call of calls) {
    for (const file of call.files) {
      const filename = file.path.split('/').pop() ?? file.path;
      for (const needle of new Set([file.path, file.fileId])) {
        for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
          citations.push({ type: 'container_file_citation', container_id: call.containerId, file_id: file.fileId, filename, start_index: at, end_index: at + needle.length });
        }
      }
    }
  }
  return citations.sort((a, b) => (a.start_index as number) - (b.start_index as number));
}
