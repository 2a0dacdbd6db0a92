import { Module } from '@nestjs/common';
import { ComputerUseToolHandler } from './computer-use.tool-handler.js';

@Module({ providers: [ComputerUseToolHandler], exports: [ComputerUseToolHandler] })
export class ComputerUseToolModule {}
