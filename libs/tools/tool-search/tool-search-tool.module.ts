import { Module } from '@nestjs/common';
import { ToolSearchToolHandler } from './tool-search.tool-handler.js';

/** The client-run `tool_search` tool type (Codex's on-demand tool loading). */
@Module({ providers: [ToolSearchToolHandler], exports: [ToolSearchToolHandler] })
export class ToolSearchToolModule {}
