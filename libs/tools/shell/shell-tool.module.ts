import { Module } from '@nestjs/common';
import { ShellToolHandler } from './shell.tool-handler.js';

@Module({ providers: [ShellToolHandler], exports: [ShellToolHandler] })
export class ShellToolModule {}
