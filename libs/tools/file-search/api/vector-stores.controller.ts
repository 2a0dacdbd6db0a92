import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { GatewayRoutes } from '#tool-sdk/index.js';
import type { Owner } from '../storage/file-search-rows.js';
import { OwnerOf } from './owner.decorator.js';
import { pageQuery } from './request-fields.js';
import { VectorStoresService } from './vector-stores.service.js';

type Obj = Promise<Record<string, unknown>>;

/** Thin edge of the Vector Stores API; every route delegates to `VectorStoresService`. */
@GatewayRoutes()
@Controller('v1/vector_stores')
export class VectorStoresController {
  constructor(private readonly stores: VectorStoresService) {}

  @Post()
  @HttpCode(200)
  create(@OwnerOf() owner: Owner, @Body() body: unknown): Obj {
    return this.stores.create(owner, body);
  }

  @Get()
  list(@OwnerOf() owner: Owner, @Query() query: Record<string, unknown>): Obj {
    return this.stores.list(owner, pageQuery(query));
  }

  @Get(':id')
  get(@OwnerOf() owner: Owner, @Param('id') id: string): Obj {
    return this.stores.get(owner, id);
  }

  @Post(':id')
  @HttpCode(200)
  update(@OwnerOf() owner: Owner, @Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.update(owner, id, body);
  }

  @Delete(':id')
  delete(@OwnerOf() owner: Owner, @Param('id') id: string): Obj {
    return this.stores.delete(owner, id);
  }

  @Post(':id/search')
  @HttpCode(200)
  search(@OwnerOf() owner: Owner, @Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Obj {
    // A client that gives up stops the query embedding (the socket may be kept alive, the response is not).
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    return this.stores.search(owner, id, body, abort.signal);
  }

  @Post(':id/files')
  @HttpCode(200)
  addFile(@OwnerOf() owner: Owner, @Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.addFile(owner, id, body);
  }

  @Get(':id/files')
  listFiles(@OwnerOf() owner: Owner, @Param('id') id: string, @Query() query: Record<string, unknown>): Obj {
    return this.stores.listFiles(owner, id, pageQuery(query), query.filter);
  }

  @Get(':id/files/:fileId')
  getFile(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.getFile(owner, id, fileId);
  }

  @Post(':id/files/:fileId')
  @HttpCode(200)
  updateFile(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('fileId') fileId: string, @Body() body: unknown): Obj {
    return this.stores.updateFile(owner, id, fileId, body);
  }

  @Delete(':id/files/:fileId')
  deleteFile(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.deleteFile(owner, id, fileId);
  }

  @Get(':id/files/:fileId/content')
  fileContent(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.fileContent(owner, id, fileId);
  }

  @Post(':id/file_batches')
  @HttpCode(200)
  createBatch(@OwnerOf() owner: Owner, @Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.createBatch(owner, id, body);
  }

  @Get(':id/file_batches/:batchId')
  getBatch(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('batchId') batchId: string): Obj {
    return this.stores.getBatch(owner, id, batchId);
  }

  @Post(':id/file_batches/:batchId/cancel')
  @HttpCode(200)
  cancelBatch(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('batchId') batchId: string): Obj {
    return this.stores.cancelBatch(owner, id, batchId);
  }

  @Get(':id/file_batches/:batchId/files')
  listBatchFiles(@OwnerOf() owner: Owner, @Param('id') id: string, @Param('batchId') batchId: string, @Query() query: Record<string, unknown>): Obj {
    return this.stores.listBatchFiles(owner, id, batchId, pageQuery(query), query.filter);
  }
}
