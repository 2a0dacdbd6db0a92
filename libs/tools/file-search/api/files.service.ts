import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { assertStorableText, InvalidRequestError, isStorableText, NotFoundError, unstorableTextError, ForbiddenError } from '#tool-sdk/index.js';
import { FILE_SEARCH_SETTINGS, type FileSearchSettings } from '../config/file-search-settings.js';
import type { FileRow, Owner, PageQuery } from '../storage/file-search-rows.js';
import { FileSearchStore, nextSeq } from '../storage/file-search.store.js';
import { fileObject, listObject } from './public-objects.js';
import { fileExpiresAfter, type Body } from './request-fields.js';

export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];

export const newFileId = (): string => `file-${randomBytes(12).toString('hex')}`;
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The part's filename as the client sent it: multer reads it as latin1,
 * clients send UTF-8. Cut at 512 code points (never inside a surrogate
 * pair); a name with NUL or a broken surrogate is a 400 naming `file`.
 */
function uploadedFilename(originalname: string): string {
  const name = Array.from(Buffer.from(originalname || 'upload', 'latin1').toString('utf8'))
    .slice(0, 512)
    .join('');
  if (!isStorableText(name)) throw unstorableTextError('file');
  return name;
}

export function fileNotFound(id: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`No such File object: ${id}`, 'file_not_found', param);
}

/**
 * The Files API. Bytes live in the file-search store; an expired file reads
 * as gone, and so does another owner's file (404, never 403, as OpenAI answers).
 */
@Injectable()
export class FilesService {
  constructor(
    private readonly store: FileSearchStore,
    @Inject(FILE_SEARCH_SETTINGS) private readonly settings: FileSearchSettings,
  ) {}

  async upload(owner: Owner, file: { originalname: string; buffer: Buffer } | undefined, fields: Body): Promise<Record<string, unknown>> {
    if (!file) throw new InvalidRequestError('file is required: a multipart/form-data part named "file".', 'file');
    // Multipart fields are read by the route, after the text guard of every route has run.
    assertStorableText(fields);
    const purpose = fields.purpose;
    if (typeof purpose !== 'string' || !FILE_PURPOSES.includes(purpose)) {
      throw new InvalidRequestError(`purpose must be one of ${FILE_PURPOSES.join(', ')}.`, 'purpose');
    }
    const seconds = fileExpiresAfter(fields);
    await this.checkQuota(owner, file.buffer.length);
    const createdAt = nowSeconds();
    const row: FileRow = {
      id: newFileId(),
      owner,
      filename: uploadedFilename(file.originalname),
      purpose,
      bytes: file.buffer.length,
      createdAt,
      seq: nextSeq(),
      expiresAt: seconds === undefined ? null : createdAt + seconds,
    };
    await this.store.insertFile(row, file.buffer);
    return fileObject(row);
  }

  /**
   * The owner's file count and bytes, from the store (so the limits hold
   * across workers and replicas). Two uploads racing may both pass by one
   * file: the bound is the limit plus the uploads in flight, never unbounded.
   */
  private async checkQuota(owner: Owner, bytes: number): Promise<void> {
    const usage = await this.store.ownerUsage(owner);
    if (usage.files + 1 > this.settings.maxFilesPerOwner) {
      throw new ForbiddenError(`You have reached the limit of ${this.settings.maxFilesPerOwner} files (fileSearch.maxFilesPerOwner); delete some first.`, 'file', 'quota_exceeded');
    }
    if (usage.bytes + bytes > this.settings.maxBytesPerOwner) {
      throw new ForbiddenError(
        `The file does not fit in your ${this.settings.maxBytesPerOwner} bytes of files (fileSearch.maxBytesPerOwner; ${usage.bytes} used).`,
        'file',
        'quota_exceeded',
      );
    }
  }

  /** A live file, or 404. */
  async require(owner: Owner, id: string, param: string | null = null): Promise<FileRow> {
    const f = await this.store.getFile(id, owner);
    if (!f || (f.expiresAt !== null && f.expiresAt <= nowSeconds())) throw fileNotFound(id, param);
    return f;
  }

  async get(owner: Owner, id: string): Promise<Record<string, unknown>> {
    return fileObject(await this.require(owner, id));
  }

  async content(owner: Owner, id: string): Promise<{ filename: string; bytes: Buffer }> {
    const f = await this.require(owner, id);
    const bytes = await this.store.fileContent(id, owner);
    if (!bytes) throw fileNotFound(id);
    return { filename: f.filename, bytes };
  }

  async list(owner: Owner, q: PageQuery, purpose: unknown): Promise<Record<string, unknown>> {
    if (purpose !== undefined && typeof purpose !== 'string') throw new InvalidRequestError('purpose must be a string.', 'purpose');
    const page = await this.store.listFiles(q, owner, purpose || undefined);
    const now = nowSeconds();
    return listObject({ ...page, rows: page.rows.filter((f) => f.expiresAt === null || f.expiresAt > now) }, fileObject);
  }

  /**
   * A file the gateway itself writes (a batch's output and error files): no
   * upload quota, since it is bounded by the input file that was counted.
   */
  async write(owner: Owner, file: { filename: string; purpose: string; bytes: Buffer }): Promise<FileRow> {
    const row: FileRow = {
      id: newFileId(),
      owner,
      filename: file.filename,
      purpose: file.purpose,
      bytes: file.bytes.length,
      createdAt: nowSeconds(),
      seq: nextSeq(),
      expiresAt: null,
    };
    await this.store.insertFile(row, file.bytes);
    return row;
  }

  async delete(owner: Owner, id: string): Promise<Record<string, unknown>> {
    await this.require(owner, id);
    await this.store.deleteFile(id, owner);
    return { id, object: 'file', deleted: true };
  }

  get maxFileBytes(): number {
    return this.settings.maxFileBytes;
  }
}
