/**
 * The tool types this repository's modules implement, by wire tag. Core
 * knows none of them: the set is open, and a module outside the repository
 * registers its own type string the same way.
 */
export const ToolType = {
  Function: 'function',
  Custom: 'custom',
  Namespace: 'namespace',
  Mcp: 'mcp',
  WebSearch: 'web_search',
  FileSearch: 'file_search',
  CodeInterpreter: 'code_interpreter',
} as const;

export type KnownToolType = (typeof ToolType)[keyof typeof ToolType];
