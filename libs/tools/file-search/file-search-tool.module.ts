import { Module } from '@nestjs/common';
import { FileSearchToolHandler } from './file-search.tool-handler.js';

@Module({ providers: [FileSearchToolHandler], exports: [FileSearchToolHandler] })
export class FileSearchToolModule {}
