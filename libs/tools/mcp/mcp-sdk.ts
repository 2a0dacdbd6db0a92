/**
 * The parts of the MCP SDK the gateway runs, imported on first use.
 *
 * With zod, zod-to-json-schema and Ajv the SDK is some 240 modules and about
 * 9 MiB of an idle worker's RSS, and most deployments configure no MCP server.
 * So nothing in this folder imports the SDK's values statically (`import type`
 * is erased and fine): the pool loads them here when it first connects to a
 * server, and code that runs only once a connection exists takes them from
 * `loadedMcpSdk`.
 */
async function importMcpSdk() {
  // One after another: the entry points share most of their modules, and Jest's
  // ESM loader fails ("… is not in cache") when two imports link one module at once.
  const client = await import('@modelcontextprotocol/sdk/client/index.js');
  const sse = await import('@modelcontextprotocol/sdk/client/sse.js');
  const stdio = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const streamableHttp = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const types = await import('@modelcontextprotocol/sdk/types.js');
  const ajv = await import('@modelcontextprotocol/sdk/validation/ajv');
  return {
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPError: streamableHttp.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator,
  };
}

export type McpSdk = Awaited<ReturnType<typeof importMcpSdk>>;

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

/** The SDK, imported once per process (a module, not state). */
export function loadMcpSdk(): Promise<McpSdk> {
  return (loading ??= importMcpSdk().then((sdk) => (loaded = sdk)));
}

/**
 * The SDK if `loadMcpSdk` has finished, else undefined. An error can only be
 * one of the SDK's classes once the SDK is loaded, so `undefined` answers
 * "not an McpError" correctly without loading anything.
 */
export function loadedMcpSdk(): McpSdk | undefined {
  return loaded;
}
