/**
 * The tool types the gateway knows by name. The set is open: a tool module
 * may register any other type string, and core treats it the same way.
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
export type ToolTypeName = KnownToolType | (string & {});
