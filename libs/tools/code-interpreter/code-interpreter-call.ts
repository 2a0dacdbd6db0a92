import type { JsonObject } from '#tool-sdk/index.js';

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

interface Cited {
  containerId: string;
  fileId: string;
  filename: string;
}

/** A trie of the names to find: each node's children by character, and the files a name ending there cites. */
interface TrieNode {
  next: Map<string, TrieNode>;
  cites?: Cited[];
  needle?: string;
}

/** Where a match can start: every name begins with one of these (`/mnt/data/...` paths, `cfile_...` ids). */
const ANCHOR_LENGTH = 6;

/**
 * `container_file_citation` annotations: each place the answer names a file
 * a run wrote (by its `/mnt/data/...` path, or by file id), cites that
 * container file, as OpenAI's answers cite the files code interpreter made.
 *
 * One pass, whatever the number of files: the names go into a trie, the text
 * is searched for their few distinct first characters (`/mnt/d`, `cfile_`),
 * and from each such place the trie is walked as far as the text matches, so
 * the work is the names' length plus the text's times the longest name, not
 * the text's times the number of files (10,000 files once stalled every
 * request for seconds).
 */
export function containerFileCitations(text: string, calls: readonly CodeInterpreterCallData[]): Array<Record<string, unknown>> {
  const root: TrieNode = { next: new Map() };
  const anchors = new Set<string>();
  const add = (needle: string, cited: Cited): void => {
    if (!needle) return;
    let node = root;
    // By UTF-16 unit, as the text is indexed.
    for (let k = 0; k < needle.length; k++) {
      let child = node.next.get(needle[k]);
      if (!child) node.next.set(needle[k], (child = { next: new Map() }));
      node = child;
    }
    (node.cites ??= []).push(cited);
    node.needle = needle;
    anchors.add(needle.slice(0, ANCHOR_LENGTH));
  };
  for (const call of calls) {
    for (const file of call.files) {
      const cited = { containerId: call.containerId, fileId: file.fileId, filename: file.path.split('/').pop() ?? file.path };
      add(file.path, cited);
      if (file.fileId !== file.path) add(file.fileId, cited);
    }
  }
  const citations: Array<Record<string, unknown>> = [];
  // As a search per name would: a name's next match starts after its previous one.
  const endOf = new Map<string, number>();
  const starts = new Set<number>();
  for (const anchor of anchors) {
    for (let at = text.indexOf(anchor); at >= 0; at = text.indexOf(anchor, at + 1)) starts.add(at);
  }
  for (const at of [...starts].sort((a, b) => a - b)) {
    let node: TrieNode | undefined = root;
    for (let i = at; node && i <= text.length; i++) {
      if (node.cites && node.needle && at >= (endOf.get(node.needle) ?? 0)) {
        endOf.set(node.needle, i);
        for (const c of node.cites) {
          citations.push({ type: 'container_file_citation', container_id: c.containerId, file_id: c.fileId, filename: c.filename, start_index: at, end_index: i });
        }
      }
      node = i < text.length ? node.next.get(text[i]) : undefined;
    }
  }
  return citations;
}
