import { Module } from '@nestjs/common';
import { CodeInterpreterToolHandler } from './code-interpreter.tool-handler.js';

@Module({ providers: [CodeInterpreterToolHandler], exports: [CodeInterpreterToolHandler] })
export class CodeInterpreterToolModule {}
