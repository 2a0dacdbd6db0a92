import { fileURLToPath } from 'node:url';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startGatewayProcess, type GatewayProcess } from './support/process/gateway-process.js';

const WITHOUT_BETTER_SQLITE3 = fileURLToPath(new URL('./support/process/without-better-sqlite3.mjs', import.meta.url));

/**
 * `storage: memory` keeps batches and the file-search index in an in-memory
 * SQLite database, which needs better-sqlite3. A host without the package
 * says so at start-up and refuses those surfaces with a clear error, rather
 * than accepting what it could not keep.
 */
describe('the memory driver without better-sqlite3', () => {
  const simulator = new SimulatedUpstream();
  let gateway: GatewayProcess & { url: string; startup: any };
  let client: OpenAI;

  beforeAll(async () => {
    const { url } = await simulator.listen(0, '127.0.0.1');
    gateway = await startGatewayProcess({ UPSTREAM_URL: url, STORAGE_DRIVER: 'memory', NODE_OPTIONS: `--import ${WITHOUT_BETTER_SQLITE3}` });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await gateway?.kill();
    await simulator.close();
  });

  it('the start-up summary states that batches and file search are unavailable, and why', () => {
    expect(gateway.startup.storage).toMatchObject({
      driver: 'memory',
      limits: expect.stringMatching(/^batches and file search unavailable: they need the package better-sqlite3/),
    });
    expect(gateway.startup.tools.inactive.file_search).toMatch(/^needs the package better-sqlite3/);
  });

  it('refuses batches and files with 503 driver_missing naming the package; responses still run', async () => {
    const batch = await client.batches.create({ input_file_id: 'file_none', endpoint: '/v1/responses', completion_window: '24h' }).catch((e: unknown) => e);
    expect(batch).toMatchObject({ status: 503, code: 'driver_missing', message: expect.stringContaining('npm install better-sqlite3') });
    const listed = await client.batches.list().catch((e: unknown) => e);
    expect(listed).toMatchObject({ status: 503, code: 'driver_missing' });
    const file = await client.files.create({ file: await toFile(Buffer.from('{"a":1}\n'), 'in.jsonl'), purpose: 'batch' }).catch((e: unknown) => e);
    expect(file).toMatchObject({ status: 503, code: 'driver_missing', message: expect.stringContaining('better-sqlite3') });
    // The state itself is the memory driver's own, and works.
    const answer = await client.responses.create({ model: 'm', input: '[[say still here]]' });
    expect(answer.output_text).toBe('still here');
  });
});
