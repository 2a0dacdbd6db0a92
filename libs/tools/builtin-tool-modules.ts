import type { DynamicModule, Type } from '@nestjs/common';
import { ApplyPatchToolModule } from '#tools/apply-patch/apply-patch-tool.module.js';
import { CodeInterpreterToolModule } from '#tools/code-interpreter/code-interpreter-tool.module.js';
import { ComputerUseToolModule } from '#tools/computer-use/computer-use-tool.module.js';
import { CustomToolModule } from '#tools/custom/custom-tool.module.js';
import { FileSearchToolModule } from '#tools/file-search/file-search-tool.module.js';
import { FunctionToolModule } from '#tools/function/function-tool.module.js';
import { LocalShellToolModule } from '#tools/local-shell/local-shell-tool.module.js';
import { McpToolModule } from '#tools/mcp/mcp-tool.module.js';
import { NamespaceToolModule } from '#tools/namespace/namespace-tool.module.js';
import { ShellToolModule } from '#tools/shell/shell-tool.module.js';
import { ToolSearchToolModule } from '#tools/tool-search/tool-search-tool.module.js';
import { WebSearchToolModule } from '#tools/web-search/web-search-tool.module.js';

/**
 * The tool-type modules a gateway loads unless told otherwise. Core never
 * reads this list: it finds whatever modules the host imports.
 */
export const BUILTIN_TOOL_MODULES: Array<Type | DynamicModule> = [
  FunctionToolModule,
  CustomToolModule,
  NamespaceToolModule,
  ToolSearchToolModule,
  ShellToolModule,
  ApplyPatchToolModule,
  LocalShellToolModule,
  ComputerUseToolModule,
  FileSearchToolModule,
  CodeInterpreterToolModule,
  WebSearchToolModule,
  McpToolModule,
];
