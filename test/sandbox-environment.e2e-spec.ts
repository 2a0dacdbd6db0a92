import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { spawnGateway, type GatewayProcess } from './support/process/gateway-process.js';

const API_KEY = `sk-env-secret-${process.pid}`;
const UPSTREAM_KEY = `upstream-secret-${process.pid}`;
const DB_PASSWORD = `dbpass-secret-${process.pid}`;
const SECRETS = [API_KEY, UPSTREAM_KEY, DB_PASSWORD];
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * The gateway's credentials are out of reach of the programs it runs: the
 * deployable gateway (two workers, the CPython sandbox) is started with
 * them in its environment; the workers get them from the primary over IPC,
 * so neither their environment nor their /proc/<pid>/environ holds them,
 * and a program in the sandbox sees neither its environment nor any of the
 * gateway's processes.
 */
describe('the gateway environment is out of the sandbox reach (worker mode, CPython backend)', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-sandbox-env-'));
  let simulator: SimulatedUpstream;
  let gateway: GatewayProcess & { url: string };
  let client: OpenAI;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    const { url } = await simulator.listen(0, '127.0.0.1');
    const configFile = join(root, 'config.json');
    writeFileSync(configFile, JSON.stringify({ codeInterpreter: { backend: 'cpython', dataDir: join(root, 'containers'), timeoutMs: 60_000 } }));
    const child = spawnGateway({
      HOST: '127.0.0.1',
      PORT: '0',
      WORKERS: '2',
      SWITCHYARD_CONFIG: configFile,
      UPSTREAM_URL: url,
      UPSTREAM_API_KEY: UPSTREAM_KEY,
      API_KEYS: API_KEY,
      STORAGE_DRIVER: 'sqlite',
      SQLITE_PATH: join(root, 'state.sqlite'),
      // Not used with SQLite, but a credential all the same: it must not be inherited either.
      DATABASE_URL: `postgres://u:${DB_PASSWORD}@127.0.0.1:1/x`,
    });
    // Two workers compile the sources at once: slow on a loaded machine.
    const line = await child
      .waitForLine((l) => l.includes('"msg":"listening"'), 110_000)
      .catch(async (err) => {
        await child.kill();
        throw err;
      });
    gateway = Object.assign(child, { url: JSON.parse(line).listen as string });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 120_000 });
    // Both workers up: each answers /health under its own id.
    const seen = new Set<string>();
    for (let i = 0; i < 400 && seen.size < 2; i++) {
      const res = await fetch(`${gateway.url}/health`, { headers: { connection: 'close' } }).catch(() => undefined);
      if (res?.ok) seen.add(String(((await res.json()) as any).worker));
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen.size).toBe(2);
  }, 180_000);

  afterAll(async () => {
    await gateway?.kill();
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('workers authenticate with API_KEYS they received from the primary, yet their environment never held it', async () => {
    const workers = childrenOf(gateway.child.pid!);
    expect(workers).toHaveLength(2);
    for (const pid of workers) {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      expect(environ).toContain('WORKERS=2');
      for (const secret of SECRETS) expect(environ).not.toContain(secret);
    }
    for (let i = 0; i < 4; i++) {
      const anonymous = await fetch(`${gateway.url}/v1/models`, { headers: { connection: 'close' } });
      expect(anonymous.status).toBe(401);
      const keyed = await fetch(`${gateway.url}/v1/models`, { headers: { connection: 'close', authorization: `Bearer ${API_KEY}` } });
      expect(keyed.status).toBe(200);
    }
  });

  it('a program in the sandbox sees no gateway variable and no gateway process', async () => {
    const pids = [gateway.child.pid!, ...childrenOf(gateway.child.pid!)];
    const code = [
      'import os, glob',
      'print("ENV", sorted(os.environ))',
      `print("PIDS", [os.path.exists(f"/proc/{p}/environ") for p in ${JSON.stringify(pids)}])`,
      'found = []',
      'for path in glob.glob("/proc/*/environ"):',
      '    try:',
      '        found.append(open(path, "rb").read().decode("latin1"))',
      '    except OSError:',
      '        pass',
      'print("ENVIRONS", "|".join(found))',
    ].join('\n');
    const response = await client.responses.create({
      model: 'switchyard-sim',
      input: `Look. ${run(code)}`,
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      include: ['code_interpreter_call.outputs'],
    });
    const call = response.output[0] as any;
    expect(call.status).toBe('completed');
    const logs: string = call.outputs[0].logs;
    // What bubblewrap sets, plus PWD (bubblewrap's chdir) and LC_CTYPE (Python's locale coercion): nothing of the gateway's.
    expect(logs).toContain(`ENV ['HOME', 'LC_CTYPE', 'MPLBACKEND', 'MPLCONFIGDIR', 'OPENBLAS_NUM_THREADS', 'PATH', 'PWD', 'XDG_CACHE_HOME']`);
    expect(logs).toContain(
      `PIDS ${JSON.stringify(pids.map(() => false))
        .replaceAll('false', 'False')
        .replaceAll(',', ', ')}`,
    );
    for (const secret of SECRETS) expect(logs).not.toContain(secret);
  }, 120_000);
});
