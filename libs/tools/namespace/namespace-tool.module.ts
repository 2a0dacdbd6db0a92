import { Module } from '@nestjs/common';
import { NamespaceToolHandler } from './namespace.tool-handler.js';

@Module({ providers: [NamespaceToolHandler], exports: [NamespaceToolHandler] })
export class NamespaceToolModule {}
