import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { GatewayRoutes } from '#src/tool-contract.js';
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
  create(@Body() body: unknown): Obj {
    return this.stores.create(body);
  }

  @Get()
  list(@Query() query: Record<string, unknown>): Obj {
    return this.stores.list(pageQuery(query));
  }

  @Get(':id')
  get(@Param('id') id: string): Obj {
    return this.stores.get(id);
  }

  @Post(':id')
  @HttpCode(200)
  update(@Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.update(id, body);
  }

  @Delete(':id')
  delete(@Param('id') id: string): Obj {
    return this.stores.delete(id);
  }

  @Post(':id/search')
  @HttpCode(200)
  search(@Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response): Obj {
    // A client that gives up stops the query embedding (the socket may be kept alive, the response is not).
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    return this.stores.search(id, body, abort.signal);
  }

  @Post(':id/files')
  @HttpCode(200)
  addFile(@Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.addFile(id, body);
  }

  @Get(':id/files')
  listFiles(@Param('id') id: string, @Query() query: Record<string, unknown>): Obj {
    return this.stores.listFiles(id, pageQuery(query), query.filter);
  }

  @Get(':id/files/:fileId')
  getFile(@Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.getFile(id, fileId);
  }

  @Post(':id/files/:fileId')
  @HttpCode(200)
  updateFile(@Param('id') id: string, @Param('fileId') fileId: string, @Body() body: unknown): Obj {
    return this.stores.updateFile(id, fileId, body);
  }

  @Delete(':id/files/:fileId')
  deleteFile(@Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.deleteFile(id, fileId);
  }

  @Get(':id/files/:fileId/content')
  fileContent(@Param('id') id: string, @Param('fileId') fileId: string): Obj {
    return this.stores.fileContent(id, fileId);
  }

  @Post(':id/file_batches')
  @HttpCode(200)
  createBatch(@Param('id') id: string, @Body() body: unknown): Obj {
    return this.stores.createBatch(id, body);
  }

  @Get(':id/file_batches/:batchId')
  getBatch(@Param('id') id: string, @Param('batchId') batchId: string): Obj {
    return this.stores.getBatch(id, batchId);
  }

  @Post(':id/file_batches/:batchId/cancel')
  @HttpCode(200)
  cancelBatch(@Param('id') id: string, @Param('batchId') batchId: string): Obj {
    return this.stores.cancelBatch(id, batchId);
  }

  @Get(':id/file_batches/:batchId/files')
  listBatchFiles(@Param('id') id: string, @Param('batchId') batchId: string, @Query() query: Record<string, unknown>): Obj {
    return this.stores.listBatchFiles(id, batchId, pageQuery(query), query.filter);
  }
}
