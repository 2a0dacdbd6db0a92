import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { legacyOwnerIdOf, OWNER_SECRET_FILE, ownerIdOf } from '#config/owner-ids.js';
import { SqliteStateStore } from '#storage/sqlite/sqlite-state-store.js';
import { newId } from '#tool-sdk/ids.js';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { type GatewayProcess, requestLines, startGatewayProcess } from './support/process/gateway-process.js';

/**
 * Owner ids keyed with the deployment's secret, through the real entry point:
 * two gateways sharing a data directory (workers of one host, or replicas on
 * a shared volume) derive one id per key, and rows stored under a key's old
 * SHA-256 are the key's again after the boot that rewrites them.
 */
const KEY = 'sk-owner-ids-e2e-key';
const GONE = 'sk-owner-ids-e2e-retired';

describe('owner ids keyed with the deployment secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-owner-e2e-'));
  let simulator: SimulatedUpstream;
  let a: GatewayProcess & { url: string };
  let b: GatewayProcess & { url: string };
  const legacy = { mine: newId('resp'), theirs: newId('resp') };

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    // What a gateway of the old ids left behind: one response of the key, one of a key no longer configured.
    const store = new SqliteStateStore({ path: join(dir, 'state.sqlite') });
    await store.init();
    for (const [id, key] of [
      [legacy.mine, KEY],
      [legacy.theirs, GONE],
    ]) {
      await store.saveResponse({
        id,
        owner: legacyOwnerIdOf(key),
        createdAt: Math.floor(Date.now() / 1000),
        previousResponseId: null,
        conversationId: null,
        status: 'completed',
        response: { id, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: 'm', output: [], metadata: {}, error: null },
        inputItems: [],
        modelItems: [],
        tools: [],
        toolChoice: 'auto',
      });
    }
    await store.close();
    const env = { API_KEYS: KEY, UPSTREAM_URL: url, SWITCHYARD_DATA_DIR: dir, STORAGE_DRIVER: 'sqlite', REQUEST_LOG: 'true' };
    // Both at once: they race for the secret file and the rewrite, as the workers of one gateway do.
    [a, b] = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await simulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (gateway: { url: string }, key = KEY) => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });

  it('a response stored under the key’s SHA-256 is the key’s after the boot that rewrote it', async () => {
    expect((await client(a).responses.retrieve(legacy.mine)).id).toBe(legacy.mine);
    expect((await client(b).responses.retrieve(legacy.mine)).id).toBe(legacy.mine);
  });

  it('rows of a key no longer configured keep their old id: no configured key reaches them', async () => {
    await expect(client(a).responses.retrieve(legacy.theirs)).rejects.toMatchObject({ status: 404 });
  });

  it('two gateways sharing the data directory derive one id: what one stores, the other serves', async () => {
    const created = await client(a).responses.create({ model: 'm', input: '[[say shared]]' });
    expect((await client(b).responses.retrieve(created.id)).output_text).toBe('shared');
    const secret = Buffer.from(readFileSync(join(dir, OWNER_SECRET_FILE), 'utf8').trim(), 'hex');
    const owner = `owner:${ownerIdOf(secret, KEY).slice(0, 16)}`;
    await new Promise((r) => setTimeout(r, 200));
    const owners = [...requestLines(a), ...requestLines(b)].filter((l) => l.path.startsWith('/v1/responses')).map((l) => l.owner);
    expect(owners.length).toBeGreaterThanOrEqual(3);
    expect(new Set(owners)).toEqual(new Set([owner]));
    // The log's prefix is not the plain hash's: nothing in it can be checked against a guessed key.
    expect(owner).not.toContain(legacyOwnerIdOf(KEY).slice(0, 16));
  });
});
