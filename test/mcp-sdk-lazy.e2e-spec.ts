import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { StreamableTestServer } from './support/mcp/mcp-test-servers.js';
import { startGatewayProcess } from './support/process/gateway-process.js';
import { MODULE_RECORDER, readModuleRecord } from './support/process/module-record.js';

/** The MCP SDK and the schema libraries it brings: some 240 modules in every process, for a feature most deployments never use. */
const MCP_SDK = ['@modelcontextprotocol/sdk', 'zod', 'zod-to-json-schema', 'ajv'];
const sdkPackagesIn = (modules: string[]) => MCP_SDK.filter((name) => modules.some((url) => url.includes(`/node_modules/${name}/`)));

/**
 * A gateway that serves requests without MCP never loads the MCP SDK; the
 * first request that connects to an MCP server does, and its call works.
 *
 * Each case runs a gateway process of its own, asked once after its last
 * request (SIGUSR2, which also stops it), so the first case's answer cannot
 * depend on what ran before it.
 */
describe('the MCP SDK loads on the first MCP connection, not at boot', () => {
  let simulator: SimulatedUpstream;
  let upstreamUrl: string;
  let server: StreamableTestServer;
  let dir: string;
  let config: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    ({ url: upstreamUrl } = await simulator.listen(0, '127.0.0.1'));
    server = await StreamableTestServer.start();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-mcp-lazy-'));
    config = join(dir, 'gateway.json');
    writeFileSync(config, JSON.stringify({ mcp: { allowedHosts: [`127.0.0.1:${server.port}`] } }));
  });

  afterAll(async () => {
    await server?.close();
    await simulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `requests` against a fresh gateway process, then returns every module its main thread loaded. */
  async function modulesAfter(name: string, requests: (openai: OpenAI) => Promise<void>): Promise<string[]> {
    const record = join(dir, `${name}.modules.json`);
    const env = { UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', NODE_OPTIONS: `--import ${MODULE_RECORDER}`, MODULE_RECORD: record };
    const gateway = await startGatewayProcess(env, ['--config', config]);
    try {
      await requests(new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 30_000 }));
      return (await readModuleRecord(gateway, record, 'SIGUSR2')).modules;
    } finally {
      await gateway.kill();
    }
  }

  it('is not loaded by a gateway that served a request without MCP tools', async () => {
    const modules = await modulesAfter('plain', async (openai) => {
      const response = await openai.responses.create({ model: 'm', input: 'Say hello.' });
      expect(response.status).toBe('completed');
    });
    // The gateway's MCP tool module is loaded all the same: only the SDK under it waits.
    expect(modules.some((u) => u.includes('/libs/tools/mcp/mcp-connection-pool.service'))).toBe(true);
    expect(sdkPackagesIn(modules)).toEqual([]);
  }, 60_000);

  it('is loaded by the first MCP connection, and the call through it works', async () => {
    const modules = await modulesAfter('mcp', async (openai) => {
      const response = await openai.responses.create({
        model: 'm',
        input: 'Echo hello. [[call demo__echo {"text":"hello"}]]',
        tools: [{ type: 'mcp', server_label: 'demo', server_url: server.url, require_approval: 'never' }],
      });
      expect(response.output.map((i) => i.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
      expect(response.output[1]).toMatchObject({ type: 'mcp_call', name: 'echo', output: 'echo: hello', error: null, status: 'completed' });
      expect(response.output_text).toBe('Based on the tool result: echo: hello');
    });
    expect(server.log.calls).toEqual([{ name: 'echo', args: { text: 'hello' } }]);
    // Seen here, so the recorder does see the SDK: its absence above is the gateway's doing.
    expect(sdkPackagesIn(modules)).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk', 'zod', 'ajv']));
  }, 60_000);
});
