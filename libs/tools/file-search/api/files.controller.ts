import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { GatewayRoutes, InvalidRequestError, TooLargeError } from '#tool-sdk/index.js';
import { FilesService } from './files.service.js';
import { OwnerOf } from './owner.decorator.js';
import type { Owner } from '../storage/file-search-rows.js';
import { pageQuery } from './request-fields.js';

/** Thin edge of the Files API: multipart parsing here, everything else in `FilesService`. */
@GatewayRoutes()
@Controller('v1/files')
export class FilesController {
  private readonly upload: (req: Request, res: Response, next: (err?: unknown) => void) => void;

  constructor(private readonly files: FilesService) {
    // In memory, bounded: the bytes go to the store in one write, and the bound is the setting.
    this.upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: files.maxFileBytes, files: 1, fields: 32 } }).single('file');
  }

  @Post()
  @HttpCode(200)
  async create(@OwnerOf() owner: Owner, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    if (!req.is('multipart/form-data')) throw new InvalidRequestError('Upload files as multipart/form-data with a "file" part.', 'file');
    await new Promise<void>((resolve, reject) =>
      this.upload(req, res, (err) => {
        if (!err) return resolve();
        const e = err as { code?: string; message?: string };
        if (e.code === 'LIMIT_FILE_SIZE') return reject(new TooLargeError(`file exceeds the ${this.files.maxFileBytes}-byte limit.`, 'file', 'file_too_large'));
        if (e.code === 'LIMIT_UNEXPECTED_FILE') return reject(new InvalidRequestError('Only one part, named "file", may carry a file.', 'file'));
        reject(new InvalidRequestError(`The multipart body could not be read: ${e.message ?? String(err)}`, 'file'));
      }),
    );
    return this.files.upload(owner, req.file, (req.body ?? {}) as Record<string, unknown>);
  }

  @Get()
  list(@OwnerOf() owner: Owner, @Query() query: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.files.list(owner, pageQuery(query), query.purpose);
  }

  @Get(':id')
  get(@OwnerOf() owner: Owner, @Param('id') id: string): Promise<Record<string, unknown>> {
    return this.files.get(owner, id);
  }

  @Get(':id/content')
  async content(@OwnerOf() owner: Owner, @Param('id') id: string, @Res() res: Response): Promise<void> {
    const { filename, bytes } = await this.files.content(owner, id);
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': bytes.length,
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`,
    });
    res.end(bytes);
  }

  @Delete(':id')
  delete(@OwnerOf() owner: Owner, @Param('id') id: string): Promise<Record<string, unknown>> {
    return this.files.delete(owner, id);
  }
}
