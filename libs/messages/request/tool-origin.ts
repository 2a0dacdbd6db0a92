/**
 * Where a tool declaration handed to the loop came from in the Anthropic
 * body. Core names tool errors by its own declaration (`tools[3].server_url`);
 * a Messages client must read them as its own fields (`mcp_servers.1.url`).
 */
export interface ToolOrigin {
  /** `tools.3` or `mcp_servers.1`. */
  path: string;
  /** Declaration field → the Anthropic field it came from; `''` for a wrapper the Anthropic body lacks (`filters`). */
  fields: Record<string, string>;
}

/** Rewrites a core parameter path (`tools[i].field...`, `input[2]`) into the Anthropic body's terms. */
export function toAnthropicParam(param: string, origins: readonly ToolOrigin[]): string {
  const tool = /^tools\[(\d+)\](?:\.([A-Za-z_]+))?(.*)$/.exec(param);
  const origin = tool ? origins[Number(tool[1])] : undefined;
  if (tool && origin) {
    const named = tool[2] ? (origin.fields[tool[2]] ?? tool[2]) : '';
    const field = named ? `.${named}` : '';
    return dotted(`${origin.path}${field}${tool[3]}`);
  }
  return dotted(param);
}

function dotted(path: string): string {
  return path.replace(/\[(\d+)\]/g, '.$1');
}
