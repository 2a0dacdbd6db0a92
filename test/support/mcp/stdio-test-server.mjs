// A minimal MCP server over stdio for tests that must kill the server process
// mid-call: it reports its own pid, so a test can signal exactly this process.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'switchyard-stdio-test', version: '1.0.0' });

server.registerTool('pid', { description: 'The server process id' }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));

server.registerTool('echo', { description: 'Echo the text back', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: `echo: ${text}` }],
}));

server.registerTool('hang', { description: 'Answer after a long time' }, async () => {
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  return { content: [{ type: 'text', text: 'late' }] };
});

await server.connect(new StdioServerTransport());
