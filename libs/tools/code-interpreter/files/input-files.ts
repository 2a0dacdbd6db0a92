import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { InvalidRequestError, NotFoundError } from '#tool-sdk/index.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';
import type { Container, ContainerStore } from '../containers/container-store.service.js';
import type { CodeInterpreterFileSource } from './file-source.interface.js';

/** An `input_file` part of the conversation, to place in the container. */
export interface InputFile {
  /** Marks the file as copied in the container's record: its `file_id`, or a digest of its `file_data`. */
  sourceId: string;
  filename: string;
  fileId?: string;
  fileData?: string;
  /** Where it was sent, for errors that name it. */
  param: string;
}

/** `data:<type>;base64,<data>` or bare base64, as OpenAI's `file_data` takes it. */
function decodeFileData(value: string): Uint8Array | null {
  const match = /^data:[^,;]*(?:;[^,;]*)*;base64,(.*)$/s.exec(value);
  const base64 = (match ? match[1] : value).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(base64)) return null;
  return new Uint8Array(Buffer.from(base64, 'base64'));
}

/**
 * The `input_file` parts of the conversation's messages (earlier turns and
 * this one), by `file_id` or inline `file_data`, as OpenAI places a
 * request's input files in an `auto` container's `/mnt/data`.
 */
export function inputFilesOf(items: readonly PublicItem[]): InputFile[] {
  const files: InputFile[] = [];
  items.forEach((item, i) => {
    const content = (item as JsonObject).content;
    if (item.type !== 'message' || !Array.isArray(content)) return;
    (content as JsonObject[]).forEach((part, j) => {
      if (part?.type !== 'input_file') return;
      const param = `input[${i}].content[${j}]`;
      if (typeof part.file_id === 'string' && part.file_id) {
        files.push({ sourceId: part.file_id, filename: typeof part.filename === 'string' ? part.filename : '', fileId: part.file_id, param });
      } else if (typeof part.file_data === 'string' && typeof part.filename === 'string' && part.filename) {
        const digest = createHash('sha256').update(part.filename).update('\0').update(part.file_data).digest('hex').slice(0, 32);
        files.push({ sourceId: `file_data:${digest}`, filename: part.filename, fileData: part.file_data, param });
      }
    });
  });
  return files;
}

/**
 * Places the conversation's input files in the container under their names,
 * each once per container (recorded with it, so a later turn on another
 * process skips it too). A file the request names but nobody can read is a
 * 400 or 404 naming the part.
 */
export async function copyInputFiles(
  containers: ContainerStore,
  source: CodeInterpreterFileSource,
  container: Container,
  items: readonly PublicItem[],
  owner: string | null,
): Promise<void> {
  const done = new Set(container.copiedFileIds);
  for (const file of inputFilesOf(items)) {
    if (done.has(file.sourceId)) continue;
    let data: Uint8Array;
    let filename = file.filename;
    if (file.fileId) {
      const read = await source.read(file.fileId, { owner });
      if (!read) throw new NotFoundError(`No file with id '${file.fileId}'.`, 'file_not_found', `${file.param}.file_id`);
      data = read.data;
      filename ||= read.filename;
    } else {
      const decoded = decodeFileData(file.fileData!);
      if (!decoded) throw new InvalidRequestError(`${file.param}.file_data must be base64 (a data URL or bare).`, `${file.param}.file_data`);
      data = decoded;
    }
    await containers.addFile(container, basename(filename), data, file.sourceId);
    done.add(file.sourceId);
  }
}
