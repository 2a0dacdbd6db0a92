import { InvalidRequestError, type JsonObject } from '#tool-sdk/index.js';

export type ContainerRef = { kind: 'auto'; fileIds: string[]; memoryLimit: string | null } | { kind: 'id'; id: string };

export interface CodeInterpreterParams {
  container: ContainerRef;
  /** The declaration's place in `tools[]`, for errors found after validation (unknown file ids). */
  path: string;
  /** Set by discovery: the container this request's calls run in. */
  containerId?: string;
}

/** OpenAI's container sizes; the operator's `memoryLimitMb` still caps what a sandbox gets. */
export const MEMORY_LIMITS = ['1g', '4g', '16g', '64g'];
export const MAX_FILE_IDS = 100;

export function validateCodeInterpreterDeclaration(decl: JsonObject, path: string): CodeInterpreterParams {
  const container = decl.container;
  const at = `${path}.container`;
  if (container === 'auto') return { container: { kind: 'auto', fileIds: [], memoryLimit: null }, path };
  if (typeof container === 'string') {
    if (container.length === 0) throw new InvalidRequestError(`${at} must not be empty.`, at);
    return { container: { kind: 'id', id: container }, path };
  }
  if (!container || typeof container !== 'object' || Array.isArray(container)) {
    throw new InvalidRequestError(`${at} is required: a container id or {"type": "auto"}.`, at);
  }
  const c = container as JsonObject;
  if (c.type !== 'auto') throw new InvalidRequestError(`${at}.type must be "auto".`, `${at}.type`);
  for (const key of Object.keys(c)) {
    if (!['type', 'file_ids', 'memory_limit', 'network_policy'].includes(key)) {
      throw new InvalidRequestError(`${at}.${key} is not a known field.`, `${at}.${key}`);
    }
  }
  let fileIds: string[] = [];
  if (c.file_ids !== undefined && c.file_ids !== null) {
    if (!Array.isArray(c.file_ids)) throw new InvalidRequestError(`${at}.file_ids must be an array of file ids.`, `${at}.file_ids`);
    if (c.file_ids.length > MAX_FILE_IDS) {
      throw new InvalidRequestError(`${at}.file_ids has ${c.file_ids.length} entries; at most ${MAX_FILE_IDS} are allowed.`, `${at}.file_ids`);
    }
    fileIds = c.file_ids.map((id, i) => {
      if (typeof id !== 'string' || id.length === 0) throw new InvalidRequestError(`${at}.file_ids[${i}] must be a file id.`, `${at}.file_ids[${i}]`);
      return id;
    });
  }
  let memoryLimit: string | null = null;
  if (c.memory_limit !== undefined && c.memory_limit !== null) {
    if (typeof c.memory_limit !== 'string' || !MEMORY_LIMITS.includes(c.memory_limit)) {
      throw new InvalidRequestError(`${at}.memory_limit must be one of ${MEMORY_LIMITS.join(', ')}.`, `${at}.memory_limit`);
    }
    memoryLimit = c.memory_limit;
  }
  if (c.network_policy !== undefined && c.network_policy !== null) {
    const policy = c.network_policy as JsonObject;
    // Sandboxes here have no network at all; asking for any is refused rather than ignored.
    if (!policy || typeof policy !== 'object' || policy.type !== 'disabled') {
      throw new InvalidRequestError(`${at}.network_policy: only {"type": "disabled"} is supported; sandboxes have no network.`, `${at}.network_policy`);
    }
  }
  return { container: { kind: 'auto', fileIds, memoryLimit }, path };
}
