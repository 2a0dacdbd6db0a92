import { Module } from '@nestjs/common';
import { FunctionToolHandler } from './function.tool-handler.js';

@Module({ providers: [FunctionToolHandler], exports: [FunctionToolHandler] })
export class FunctionToolModule {}
