/**
 * Tool types the OpenAI Responses API defines (openai-node
 * `resources/responses/responses.ts`, `Tool`): the default of
 * `tools.refuseUnhandledTypes`. A declaration of one of these that no loaded
 * module handles is refused with a 400 naming the type: the client relies on
 * a tool OpenAI would run or return, and a reply made without it would look
 * like a model that chose not to use it. A type outside the list is a newer
 * client's and is skipped, never executed. The list is configuration, not
 * core's knowledge: core names no tool type.
 */
export const OPENAI_TOOL_TYPES: ReadonlySet<string> = new Set([
  'function',
  'custom',
  'namespace',
  'file_search',
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
  'computer_use_preview',
  'computer',
  'mcp',
  'code_interpreter',
  'image_generation',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
]);
