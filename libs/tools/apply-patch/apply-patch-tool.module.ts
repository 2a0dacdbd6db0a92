import { Module } from '@nestjs/common';
import { ApplyPatchToolHandler } from './apply-patch.tool-handler.js';

@Module({ providers: [ApplyPatchToolHandler], exports: [ApplyPatchToolHandler] })
export class ApplyPatchToolModule {}
