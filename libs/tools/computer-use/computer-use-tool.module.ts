import { Module } from '@nestjs/common';
import { ComputerToolHandler, ComputerUseToolHandler } from './computer-use.tool-handler.js';

@Module({ providers: [ComputerUseToolHandler, ComputerToolHandler], exports: [ComputerUseToolHandler, ComputerToolHandler] })
export class ComputerUseToolModule {}
