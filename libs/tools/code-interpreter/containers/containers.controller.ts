import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { GatewayRoutes, InvalidRequestError, type JsonObject, listQuery, NotFoundError, requestBody, requestOwner } from '#tool-sdk/index.js';
import { MEMORY_LIMITS } from '../code-interpreter-declaration.js';
import { CODE_INTERPRETER_FILE_SOURCE, type CodeInterpreterFileSource } from '../files/file-source.interface.js';
import { containerFileError } from './container-errors.js';
import { type Container, type ContainerFile, ContainerStore } from './container-store.service.js';

/**
 * Largest upload buffered for `POST /v1/containers/{id}/files`. The
 * container's own byte budget (`maxContainerBytes`) still applies after it.
 */
const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

interface UploadedPart {
  originalname: string;
  buffer: Buffer;
}

interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export function containerObject(c: Container): JsonObject {
  return {
    id: c.id,
    object: 'container',
    name: c.name,
    created_at: Math.floor(c.createdAt / 1000),
    last_active_at: Math.floor(c.lastActiveAt / 1000),
    status: 'running',
    expires_after: { anchor: 'last_active_at', minutes: Math.max(1, Math.round(c.idleExpiryMs / 60_000)) },
    memory_limit: c.memoryLimit,
  };
}

export function fileObject(c: Container, f: ContainerFile): JsonObject {
  return { id: f.id, object: 'container.file', container_id: c.id, path: `/mnt/data/${f.path}`, bytes: f.bytes, created_at: Math.floor(f.createdAt / 1000), source: f.source };
}

/** `limit` (1..100, default 20), `after` (an id), `order` (`asc` | `desc`, default `desc`), as OpenAI's list endpoints take them. */
function page<T extends { id: string }>(all: T[], query: Record<string, unknown>): ListPage<T> {
  const { limit: limitRaw, order, after } = listQuery(query);
  const sorted = order === 'desc' ? [...all].reverse() : all;
  let start = 0;
  if (after !== undefined) {
    const i = sorted.findIndex((x) => x.id === after);
    if (i < 0) throw new InvalidRequestError(`No item with id '${after}' to list after.`, 'after');
    start = i + 1;
  }
  const data = sorted.slice(start, start + limitRaw);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limitRaw < sorted.length };
}

const CREATE_FIELDS = new Set(['name', 'expires_after', 'file_ids', 'memory_limit', 'network_policy']);

/**
 * The options of `containers.create` beyond name and expiry: each honoured
 * or refused, never accepted and dropped. `memory_limit` is one of OpenAI's
 * sizes, kept on the container (echoed, and the sandbox's size within the
 * operator's cap) as the tool declaration's is; sandboxes have no network,
 * so a `network_policy` other than `{"type": "disabled"}` (an allowlist,
 * say) is a 400 naming it.
 */
function containerOptions(raw: JsonObject): { memoryLimit: string | null } {
  for (const key of Object.keys(raw)) {
    if (!CREATE_FIELDS.has(key)) throw new InvalidRequestError(`${key} is not a field of containers.create (they are ${[...CREATE_FIELDS].join(', ')}).`, key);
  }
  let memoryLimit: string | null = null;
  if (raw.memory_limit !== undefined && raw.memory_limit !== null) {
    if (typeof raw.memory_limit !== 'string' || !MEMORY_LIMITS.includes(raw.memory_limit)) {
      throw new InvalidRequestError(`memory_limit must be one of ${MEMORY_LIMITS.join(', ')}.`, 'memory_limit');
    }
    memoryLimit = raw.memory_limit;
  }
  if (raw.network_policy !== undefined && raw.network_policy !== null) {
    const policy = raw.network_policy as JsonObject;
    if (!policy || typeof policy !== 'object' || Array.isArray(policy) || policy.type !== 'disabled') {
      throw new InvalidRequestError(
        'network_policy: only {"type": "disabled"} is supported; containers here have no network, so an allowlist cannot be honoured.',
        'network_policy',
      );
    }
  }
  return { memoryLimit };
}

/**
 * A subset of OpenAI's Containers API: create, list, retrieve and delete
 * containers; upload, list, retrieve, delete and download their files.
 *
 * Every container belongs to the owner of the request that made it (the
 * tool's own containers too: discovery says whose request it is); other
 * keys get 404 for it and its files and never see it listed.
 */
@GatewayRoutes()
@Controller('v1/containers')
export class ContainersController {
  constructor(
    private readonly store: ContainerStore,
    @Inject(CODE_INTERPRETER_FILE_SOURCE) private readonly fileSource: CodeInterpreterFileSource,
  ) {}

  @Post()
  @HttpCode(200)
  async create(@Body() body: unknown, @Req() req: Request): Promise<JsonObject> {
    const raw = requestBody(body ?? undefined, { optional: true });
    if (raw.name !== undefined && (typeof raw.name !== 'string' || raw.name.length > 256))
      throw new InvalidRequestError('name must be a string of at most 256 characters.', 'name');
    let idleExpiryMs: number | undefined;
    if (raw.expires_after !== undefined) {
      const e = raw.expires_after as JsonObject;
      if (!e || typeof e !== 'object' || e.anchor !== 'last_active_at') throw new InvalidRequestError('expires_after.anchor must be "last_active_at".', 'expires_after.anchor');
      if (typeof e.minutes !== 'number' || !Number.isInteger(e.minutes) || e.minutes < 1 || e.minutes > 20) {
        throw new InvalidRequestError('expires_after.minutes must be an integer from 1 to 20.', 'expires_after.minutes');
      }
      idleExpiryMs = e.minutes * 60_000;
    }
    if (raw.file_ids !== undefined) throw new InvalidRequestError('file_ids is not supported here; pass them in the code_interpreter tool declaration.', 'file_ids');
    const { memoryLimit } = containerOptions(raw);
    const c = await this.store.create({ name: raw.name as string | undefined, owner: requestOwner(req), memoryLimit, idleExpiryMs }).catch((err: unknown) => {
      throw containerFileError(err, null) ?? err;
    });
    return containerObject(c);
  }

  @Get()
  async list(@Query() query: Record<string, unknown>, @Req() req: Request): Promise<ListPage<JsonObject>> {
    const p = page(await this.store.list(requestOwner(req)), query);
    return { ...p, data: p.data.map((c) => containerObject(c as Container)) };
  }

  @Get(':id')
  async retrieve(@Param('id') id: string, @Req() req: Request): Promise<JsonObject> {
    return containerObject(await this.container(id, req));
  }

  @Delete(':id')
  async remove(@Param('id') id: string, @Req() req: Request): Promise<JsonObject> {
    await this.container(id, req);
    await this.store.delete(id);
    return { id, object: 'container.deleted', deleted: true };
  }

  @Get(':id/files')
  async files(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<ListPage<JsonObject>> {
    const c = await this.container(id, req);
    const p = page(
      [...c.files.values()].sort((a, b) => a.createdAt - b.createdAt),
      query,
    );
    return { ...p, data: p.data.map((f) => fileObject(c, f)) };
  }

  /** Multipart with a `file` part, or JSON `{"file_id"}` naming a file the file source knows. */
  @Post(':id/files')
  @HttpCode(200)
  @UseInterceptors(FileInterceptor('file', { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1 } }))
  async upload(@Param('id') id: string, @UploadedFile() part: UploadedPart | undefined, @Body() body: unknown, @Req() req: Request): Promise<JsonObject> {
    const c = await this.container(id, req);
    let name: string;
    let data: Uint8Array;
    if (part) {
      // Multer reads the part's filename as latin1; clients send UTF-8 (as the Files API decodes it).
      name = Buffer.from(part.originalname, 'latin1').toString('utf8');
      data = new Uint8Array(part.buffer);
    } else {
      const fileId = (body as JsonObject | undefined)?.file_id;
      if (typeof fileId !== 'string' || fileId === '') throw new InvalidRequestError('Send a multipart "file" part or a JSON "file_id".', 'file');
      const found = await this.fileSource.read(fileId, { owner: requestOwner(req) }).catch((err: unknown) => {
        throw containerFileError(err, 'file_id') ?? err;
      });
      if (!found) throw new NotFoundError(`No file with id '${fileId}'.`, 'file_not_found', 'file_id');
      name = found.filename;
      data = found.data;
    }
    try {
      const f = await this.store.addFile(c, name, data);
      return fileObject(c, f);
    } catch (err) {
      throw containerFileError(err, part ? 'file' : 'file_id') ?? err;
    }
  }

  @Get(':id/files/:fileId')
  async file(@Param('id') id: string, @Param('fileId') fileId: string, @Req() req: Request): Promise<JsonObject> {
    const c = await this.container(id, req);
    return fileObject(c, this.fileOf(c, fileId));
  }

  @Delete(':id/files/:fileId')
  async removeFile(@Param('id') id: string, @Param('fileId') fileId: string, @Req() req: Request): Promise<JsonObject> {
    const c = await this.container(id, req);
    await this.store.deleteFile(c, this.fileOf(c, fileId));
    return { id: fileId, object: 'container.file.deleted', deleted: true };
  }

  @Get(':id/files/:fileId/content')
  async content(@Param('id') id: string, @Param('fileId') fileId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const c = await this.container(id, req);
    const f = this.fileOf(c, fileId);
    const body = await this.store.content(c, f).catch((err: unknown) => {
      throw containerFileError(err, 'file_id') ?? err;
    });
    // Never rendered by a browser on the gateway's origin: what the code wrote is untrusted.
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('content-disposition', `attachment; filename="${encodeURIComponent(f.path.split('/').pop() ?? 'file')}"`);
    res.status(200).end(body);
  }

  /** The caller's own live container; another owner's answers 404 like an unknown id (OpenAI never says 403 here). */
  private async container(id: string, req: Request): Promise<Container> {
    const c = await this.store.owned(id, requestOwner(req));
    if (!c) throw new NotFoundError(`Container with id '${id}' not found.`, 'container_not_found', 'container_id');
    return c;
  }

  private fileOf(c: Container, fileId: string): ContainerFile {
    const f = this.store.fileById(c, fileId);
    if (!f) throw new NotFoundError(`File with id '${fileId}' not found in container '${c.id}'.`, 'file_not_found', 'file_id');
    return f;
  }
}
