/**
 * A tool type tag (what `tools[].type` routes on). The set is open: core
 * treats every module's type the same way and names none of them.
 */
export type ToolTypeName = string;
