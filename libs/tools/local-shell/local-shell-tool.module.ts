import { Module } from '@nestjs/common';
import { LocalShellToolHandler } from './local-shell.tool-handler.js';

@Module({ providers: [LocalShellToolHandler], exports: [LocalShellToolHandler] })
export class LocalShellToolModule {}
