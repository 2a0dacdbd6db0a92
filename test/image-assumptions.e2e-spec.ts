import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';

/**
 * What the container image assumes, checked without a container engine: the
 * built gateway (the image's CMD, `node dist/apps/gateway/src/main.js`) runs
 * as an unprivileged user, in a read-only file system where only the data
 * directory is writable (bubblewrap, which CI installs), with the default
 * worker count, from a tree laid out like the image's `/app`: `dist/`, the
 * launcher, the sandbox host scripts and `node_modules` pruned to the
 * run-time packages (`scripts/runtime-deps.mjs --prune`, the Dockerfile's step).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const NOBODY = 65534;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The image's CMD as `nobody`, with `/` read-only and `writable` bound read-write. */
function confined(app: string, writable: string, env: Record<string, string>): { child: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> } {
  const setenv = Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]);
  const child = spawn(
    'setpriv',
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      'bwrap',
      '--ro-bind',
      '/',
      '/',
      '--bind',
      writable,
      writable,
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--die-with-parent',
      '--chdir',
      app,
      '--clearenv',
      '--setenv',
      'PATH',
      process.env.PATH ?? '/usr/bin:/bin',
      ...setenv,
      process.execPath,
      'dist/apps/gateway/src/main.js',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

describe('the image as shipped: unprivileged, read-only root, one writable data directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-image-'));
  const app = join(root, 'app');
  let simulator: SimulatedUpstream;
  let upstream: string;

  beforeAll(async () => {
    // Only the test's own directories are created; `nobody` must be able to reach them.
    chmodSync(root, 0o755);
    expect(spawnSync('bwrap', ['--version']).status).toBe(0);
    // The image ships dist/; build it here when the sources are newer (as `npm start` would).
    const built = spawnSync(process.execPath, ['--input-type=module', '-e', `import { ensureBuilt } from './scripts/build-freshness.mjs'; ensureBuilt(process.cwd());`], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    expect(built.status).toBe(0);
    // The image's /app: what the Dockerfile's runtime stage copies (hard links: quick, and the checkout is untouched).
    mkdirSync(join(app, 'libs/tools/code-interpreter/sandbox/pyodide'), { recursive: true });
    mkdirSync(join(app, 'libs/tools/file-search/ingestion'), { recursive: true });
    mkdirSync(join(app, 'libs/passthrough/batches'), { recursive: true });
    mkdirSync(join(app, 'libs/console'), { recursive: true });
    const parts = [
      'dist',
      'bin',
      'node_modules',
      'package.json',
      'package-lock.json',
      'scripts',
      'libs/tools/code-interpreter/sandbox/pyodide/host',
      'libs/tools/file-search/ingestion/thread',
      'libs/passthrough/batches/thread',
      'libs/console/static',
    ];
    for (const part of parts) {
      expect(spawnSync('cp', ['-al', join(ROOT, part), join(app, part)]).status).toBe(0);
    }
    const pruned = spawnSync(process.execPath, [join(app, 'scripts/runtime-deps.mjs'), '--prune', '--root', app], { encoding: 'utf8' });
    expect(pruned.status).toBe(0);
    for (const dev of ['typescript', 'jest', 'eslint', '@swc/core', 'openai']) expect(existsSync(join(app, 'node_modules', dev))).toBe(false);
    simulator = new SimulatedUpstream({});
    upstream = (await simulator.listen(0, '127.0.0.1')).url;
  }, 300_000);
  afterAll(async () => {
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('boots with the default workers, keeps every file it writes under SWITCHYARD_DATA_DIR, and serves', async () => {
    const data = join(root, 'data');
    mkdirSync(data);
    chownSync(data, NOBODY, NOBODY);
    const port = await freePort();
    const gateway = confined(app, data, {
      SWITCHYARD_DATA_DIR: data,
      HOST: '127.0.0.1',
      PORT: String(port),
      UPSTREAM_URL: upstream,
      NODE_ENV: 'production',
      CONSOLE_ENABLED: 'true',
      USAGE_ADMIN_KEYS: 'sk-image-admin',
    });
    try {
      for (let i = 0; i < 1_200 && !gateway.out().includes('"msg":"listening"'); i++) {
        if (gateway.child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const listening = gateway
        .out()
        .split('\n')
        .find((l) => l.includes('"msg":"listening"'));
      expect({ listening, stderr: gateway.err() }).toMatchObject({ listening: expect.any(String) });
      expect(JSON.parse(listening!)).toMatchObject({ workers: 2, storage: { driver: 'sqlite', location: join(data, 'state.sqlite') } });
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      // The console's page comes from the image's copy of libs/console/static, its API from dist/.
      const page = await fetch(`${base}/console`);
      expect([page.status, (await page.text()).includes('<title>Switchyard console</title>')]).toEqual([200, true]);
      expect((await fetch(`${base}/console/assets/console.js`)).status).toBe(200);
      expect((await fetch(`${base}/console/api/sections`, { headers: { authorization: 'Bearer sk-image-admin' } })).status).toBe(200);
      const created = await fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', input: '[[say stored]]' }),
      });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      // Stored in the SQLite file under the data directory, readable from every worker.
      for (let i = 0; i < 4; i++) expect((await fetch(`${base}/v1/responses/${id}`, { headers: { connection: 'close' } })).status).toBe(200);
      // The code interpreter's sandbox starts and runs with nothing writable but the data directory.
      const code = 'print(6 * 7)';
      const ran = await fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'm',
          input: `[[call code_interpreter ${JSON.stringify({ code })}]]`,
          tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
          include: ['code_interpreter_call.outputs'],
        }),
      });
      const ranBody = (await ran.json()) as any;
      expect({ status: ran.status, stderr: gateway.err() }).toMatchObject({ status: 200 });
      expect(ranBody.output[0]).toMatchObject({ type: 'code_interpreter_call', status: 'completed', outputs: [{ type: 'logs', logs: '42\n' }] });
      expect(readdirSync(data).sort()).toEqual(expect.arrayContaining(['containers', 'files.sqlite', 'state.sqlite']));
    } finally {
      // SIGTERM to the gateway (bwrap's child), as the container runtime sends it to PID 1; bwrap exits with its code.
      // (Skipped when it already exited: the assertion above then says why.)
      if (gateway.child.exitCode === null) {
        const pid = Number(readFileSync(`/proc/${gateway.child.pid}/task/${gateway.child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
        process.kill(pid, 'SIGTERM');
        expect(await gateway.exited).toBe(0);
      }
    }
  }, 120_000);

  it('an unwritable data directory stops it with one line naming SWITCHYARD_DATA_DIR', async () => {
    const data = join(root, 'root-owned');
    mkdirSync(data, { mode: 0o755 });
    const scratch = join(root, 'scratch');
    mkdirSync(scratch);
    chownSync(scratch, NOBODY, NOBODY);
    const gateway = confined(app, scratch, { SWITCHYARD_DATA_DIR: data, HOST: '127.0.0.1', PORT: String(await freePort()), UPSTREAM_URL: upstream });
    const code = await gateway.exited;
    expect(code).not.toBe(0);
    const lines = gateway
      .err()
      .split('\n')
      .filter((l) => l.trim());
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^Cannot write to the data directory ${data} \\(setting server\\.dataDir, variable SWITCHYARD_DATA_DIR\\): EACCES`))]);
    expect(existsSync(join(data, 'state.sqlite'))).toBe(false);
  }, 120_000);
});
