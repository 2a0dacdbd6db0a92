import { Module } from '@nestjs/common';
import { CustomToolHandler } from './custom.tool-handler.js';

@Module({ providers: [CustomToolHandler], exports: [CustomToolHandler] })
export class CustomToolModule {}
