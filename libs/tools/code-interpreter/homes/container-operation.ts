/**
 * What one process asks of a container's home: an operation on the
 * container's files or interpreter, named by kind, never a backend's own
 * call, so that any backend (Pyodide, CPython, a kernel) is reached the same
 * way. Byte payloads (an uploaded file, a download) travel beside the JSON
 * part of a frame, not inside it.
 */
export type ContainerOperation =
  | { kind: 'run'; containerId: string; owner: string | null; code: string }
  | { kind: 'add-file'; containerId: string; owner: string | null; name: string; sourceId?: string; data: Uint8Array }
  | { kind: 'content'; containerId: string; owner: string | null; fileId: string }
  | { kind: 'delete-file'; containerId: string; owner: string | null; fileId: string }
  | { kind: 'delete'; containerId: string; owner: string | null };

export const OPERATION_KINDS: ReadonlySet<string> = new Set(['run', 'add-file', 'content', 'delete-file', 'delete']);

/** Why an operation failed, as the home reports it; the caller throws the matching error. */
export type OperationFailure =
  | 'container_not_found'
  | 'file_not_found'
  | 'container_full'
  | 'invalid'
  | 'not_home'
  | 'invalid_file_name'
  | 'unsafe_container_file'
  /** An owner's quota, with the setting's name after the colon. */
  | `quota_exceeded:${string}`;

/**
 * A frame: 4 bytes (big-endian length of the JSON part), the JSON part,
 * then the bytes of its `data` field if it had one.
 */
export function encodeFrame(value: Record<string, unknown>): Buffer {
  const { data, ...rest } = value as { data?: Uint8Array };
  const json = Buffer.from(JSON.stringify({ ...rest, hasData: data !== undefined }));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(json.length);
  return Buffer.concat([head, json, data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.alloc(0)]);
}

export function decodeFrame<T>(frame: Buffer): T {
  if (frame.length < 4) throw new Error('short frame');
  const size = frame.readUInt32BE(0);
  if (4 + size > frame.length) throw new Error('truncated frame');
  const { hasData, ...value } = JSON.parse(frame.subarray(4, 4 + size).toString('utf8')) as Record<string, unknown> & { hasData?: boolean };
  if (hasData) value.data = new Uint8Array(frame.subarray(4 + size));
  return value as T;
}
