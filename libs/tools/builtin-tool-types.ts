import { APPLY_PATCH } from '#tools/apply-patch/apply-patch.tool-type.js';
import { CODE_INTERPRETER } from '#tools/code-interpreter/code-interpreter.tool-type.js';
import { COMPUTER, COMPUTER_USE } from '#tools/computer-use/computer-use.tool-type.js';
import { CUSTOM } from '#tools/custom/custom.tool-type.js';
import { FILE_SEARCH } from '#tools/file-search/file-search.tool-type.js';
import { FUNCTION } from '#tools/function/function.tool-type.js';
import { LOCAL_SHELL } from '#tools/local-shell/local-shell.tool-type.js';
import { MCP } from '#tools/mcp/mcp.tool-type.js';
import { NAMESPACE } from '#tools/namespace/namespace.tool-type.js';
import { SHELL } from '#tools/shell/shell.tool-type.js';
import { WEB_SEARCH } from '#tools/web-search/web-search.tool-type.js';

/**
 * The tool types this repository's modules implement, by wire tag, each
 * from its own module's key. Core knows none of them: the set is open, and a
 * module outside the repository declares its own key the same way.
 */
export const ToolType = {
  Function: FUNCTION,
  Custom: CUSTOM,
  Namespace: NAMESPACE,
  Mcp: MCP,
  WebSearch: WEB_SEARCH,
  FileSearch: FILE_SEARCH,
  CodeInterpreter: CODE_INTERPRETER,
  Shell: SHELL,
  ApplyPatch: APPLY_PATCH,
  LocalShell: LOCAL_SHELL,
  ComputerUse: COMPUTER_USE,
  Computer: COMPUTER,
} as const;

export type KnownToolType = (typeof ToolType)[keyof typeof ToolType];
