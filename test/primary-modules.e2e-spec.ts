import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { WORKER_SEMI_SPACE_MIB } from '../apps/gateway/src/workers.js';
import { spawnGateway } from './support/process/gateway-process.js';

const RECORDER = fileURLToPath(new URL('./support/process/module-recorder.mjs', import.meta.url));

/**
 * The primary of worker mode only forks, watches and merges: after its two
 * workers have started and served, it has loaded neither Nest nor any
 * gateway module nor the validation packages the config sections use (the
 * config is read in a short-lived child), and no metrics package before
 * anything scrapes. Issue 29: its RSS was 175-205 MiB; issue 53: at most 60.
 */
describe('the primary of worker mode loads no app module', () => {
  it('after both workers listen and a response is served', async () => {
    const simulator = new SimulatedUpstream({});
    const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-primary-'));
    const record = join(dir, 'modules.json');
    const gateway = spawnGateway({
      HOST: '127.0.0.1',
      PORT: '0',
      WORKERS: '2',
      UPSTREAM_URL: upstreamUrl,
      STORAGE_DRIVER: 'sqlite',
      SWITCHYARD_DATA_DIR: dir,
      NODE_OPTIONS: `--import ${RECORDER}`,
      MODULE_RECORD: record,
    });
    try {
      // Each worker compiles the sources on its own: slower than a built start.
      const startup = JSON.parse(await gateway.waitForLine((l) => l.includes('"msg":"listening"'), 100_000));
      expect(startup.workers).toBe(2);
      const openai = new OpenAI({ baseURL: `${startup.listen}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 30_000 });
      const response = await openai.responses.create({ model: 'm', input: 'hello' });
      expect(response.status).toBe('completed');

      // Its workers run with the young generation capped (see WORKER_SEMI_SPACE_MIB), the ts loader kept.
      const workers = readFileSync(`/proc/${gateway.child.pid}/task/${gateway.child.pid}/children`, 'utf8').split(/\s+/).filter(Boolean);
      expect(workers).toHaveLength(2);
      for (const pid of workers) {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        expect(argv).toEqual(expect.arrayContaining(['--import', `--max-semi-space-size=${WORKER_SEMI_SPACE_MIB}`]));
      }

      gateway.child.kill('SIGUSR2');
      let seen: { modules: string[] } | undefined;
      for (let i = 0; i < 200 && !seen; i++) {
        await new Promise((r) => setTimeout(r, 25));
        try {
          seen = JSON.parse(readFileSync(record, 'utf8'));
        } catch {
          // not written yet
        }
      }
      expect(seen).toBeDefined();
      // What it runs is there, so an empty record cannot pass for a lean one.
      expect(seen!.modules.some((u) => u.endsWith('/apps/gateway/src/primary.ts'))).toBe(true);
      expect(seen!.modules.some((u) => u.endsWith('/apps/gateway/src/workers.ts'))).toBe(true);
      const app = seen!.modules.filter(
        (u) =>
          /\/node_modules\/(@nestjs\/|class-validator\/|class-transformer\/|rxjs\/|express\/)/.test(u) ||
          // prom-client (and the @opentelemetry/api it requires) loads at the first scrape of the merged metrics.
          /\/node_modules\/(prom-client|@opentelemetry)\//.test(u) ||
          /\/(libs\/tools|libs\/core\/loop|libs\/responses|libs\/storage|libs\/upstream)\//.test(u) ||
          /\/src\/(gateway\.module|gateway-config\.loader|config-sections)\.ts$/.test(u) ||
          u.endsWith('/apps/gateway/src/gateway-app.ts'),
      );
      expect(app).toEqual([]);
    } finally {
      const exited = gateway.exited;
      gateway.child.kill('SIGTERM');
      await exited;
      await simulator.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
