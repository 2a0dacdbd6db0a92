import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InvalidRequestError, NotFoundError, isGatewayError } from '#tool-sdk/errors.js';
import { errorKind } from '#edge/errors/error-kinds.js';
import { FILE_TEXT, type FileText, type MessageFiles } from '#tool-sdk/ports/message-files.interface.js';
import { STORED_FILES, type StoredFiles } from '#tool-sdk/ports/stored-files.js';
import type { JsonObject, PublicItem } from '#tool-sdk/items.js';

const IMAGE_TYPES: Array<{ mime: string; test: (b: Uint8Array) => boolean }> = [
  { mime: 'image/png', test: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/gif', test: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 },
  { mime: 'image/webp', test: (b) => b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50 },
];

/** `data:<type>;base64,<data>` or bare base64, as OpenAI's `file_data` takes it; null when it is neither. */
export function decodeFileData(value: string): Uint8Array | null {
  const match = /^data:[^,;]*(?:;[^,;]*)*;base64,(.*)$/s.exec(value);
  const base64 = (match ? match[1] : value).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(base64)) return null;
  return new Uint8Array(Buffer.from(base64, 'base64'));
}

function isFilePart(part: unknown): boolean {
  const p = part as JsonObject | null;
  return !!p && (p.type === 'input_file' || (p.type === 'input_image' && typeof p.file_id === 'string' && typeof p.image_url !== 'string'));
}

/**
 * Where an item carries parts that may name files: a message's `content`, or
 * the `output` list of a tool's answer (`function_call_output`,
 * `custom_tool_call_output`, ...), where a tool hands the model a file it
 * read. Undefined when no part there is a file.
 */
function filePartsField(item: PublicItem): 'content' | 'output' | undefined {
  const it = item as JsonObject;
  if (item.type === 'message' && Array.isArray(it.content) && it.content.some(isFilePart)) return 'content';
  if (item.type.endsWith('_output') && Array.isArray(it.output) && it.output.some(isFilePart)) return 'output';
  return undefined;
}

/**
 * `MESSAGE_FILES`: reads the files a turn's messages name from the Files API
 * (`STORED_FILES`) or their inline `file_data`, and has their text extracted
 * by the file-search extractors (`FILE_TEXT`: in its thread pool, with its
 * caps). Both ports are looked up when a message carries a file, so a
 * gateway without the Files API answers such a part with a 400 naming it.
 */
@Injectable()
export class MessageFilesResolver implements MessageFiles {
  constructor(private readonly moduleRef: ModuleRef) {}

  private port<T>(token: symbol, param: string, what: string): T {
    let found: T | undefined;
    try {
      found = this.moduleRef.get<T>(token, { strict: false });
    } catch {
      found = undefined;
    }
    if (!found) throw new InvalidRequestError(`${param}: ${what} needs the gateway's Files API (the file_search module), which is not loaded.`, param, 'unsupported_parameter');
    return found;
  }

  async resolve(input: readonly PublicItem[], caller: { owner: string | null; signal?: AbortSignal }): Promise<PublicItem[]> {
    if (!input.some((item) => filePartsField(item) !== undefined)) return input as PublicItem[];
    const out: PublicItem[] = [];
    for (const [i, item] of input.entries()) {
      const field = filePartsField(item);
      if (!field) {
        out.push(item);
        continue;
      }
      const parts: JsonObject[] = [];
      for (const [j, part] of ((item as JsonObject)[field] as JsonObject[]).entries()) {
        caller.signal?.throwIfAborted();
        const path = `input[${i}].${field}[${j}]`;
        if (!isFilePart(part)) parts.push(part);
        else if (part.type === 'input_image') parts.push(await this.image(part, path, caller.owner));
        else parts.push(await this.document(part, path, caller.owner));
      }
      out.push({ ...(item as JsonObject), [field]: parts } as PublicItem);
    }
    return out;
  }

  private async read(fileId: string, owner: string | null, param: string): Promise<{ filename: string; data: Uint8Array }> {
    const file = await this.port<StoredFiles>(STORED_FILES, param, 'file_id').read(fileId, owner);
    if (!file) throw new NotFoundError(`No such File object: ${fileId}`, 'file_not_found', param);
    return file;
  }

  private async image(part: JsonObject, path: string, owner: string | null): Promise<JsonObject> {
    const { data } = await this.read(part.file_id as string, owner, `${path}.file_id`);
    const type = IMAGE_TYPES.find((t) => t.test(data));
    if (!type) throw new InvalidRequestError(`${path}.file_id is not a PNG, JPEG, GIF or WebP image.`, `${path}.file_id`, 'invalid_image');
    const { file_id: _id, ...rest } = part;
    return { ...rest, image_url: `data:${type.mime};base64,${Buffer.from(data).toString('base64')}` };
  }

  private async document(part: JsonObject, path: string, owner: string | null): Promise<JsonObject> {
    let file: { filename: string; data: Uint8Array };
    if (typeof part.file_id === 'string') {
      file = await this.read(part.file_id, owner, `${path}.file_id`);
    } else {
      const data = decodeFileData(part.file_data as string);
      if (!data) throw new InvalidRequestError(`${path}.file_data must be base64 (a data URL or bare).`, `${path}.file_data`);
      file = { filename: part.filename as string, data };
    }
    const extractor = this.port<FileText>(FILE_TEXT, `${path}.type`, 'input_file');
    let text: string;
    try {
      text = await extractor.extract(file.filename, file.data, owner);
    } catch (e) {
      // The extractor's refusal of this file (too large, unreadable) names the part it came from; its own failures pass on.
      if (isGatewayError(e) && errorKind(e).status < 500)
        throw new InvalidRequestError(`${path}: ${e.message}`, typeof part.file_id === 'string' ? `${path}.file_id` : `${path}.file_data`, e.code);
      throw e;
    }
    // The model reads the document as text in the message, introduced by its name.
    return { type: 'input_text', text: `<file name="${file.filename.replace(/"/g, "'")}">\n${text}\n</file>` };
  }
}
