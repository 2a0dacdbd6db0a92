/**
 * A tool type tag (what `tools[].type` routes on). The set is open: core
 * treats every module's type the same way and names none of them.
 */
export type ToolTypeName = string;

/**
 * A tool type's tag, carrying the execution parameters `E` its handler's
 * functions hand to its executor. At run time it is the plain tag; at
 * compile time a handler and an executor declared with one key must agree
 * on `E`, so parameters reach the executor typed, not as `any`.
 */
export type ToolTypeKey<E = unknown> = ToolTypeName & { readonly __executionParams?: (params: E) => E };

/** The key of a tool type: `const FILE_SEARCH = toolType<FileSearchParams>('file_search')`. */
export function toolType<E = unknown>(tag: string): ToolTypeKey<E> {
  return tag as ToolTypeKey<E>;
}
