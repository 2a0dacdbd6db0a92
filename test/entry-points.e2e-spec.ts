import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';

/**
 * The README's commands exactly as an operator types them (`npm start`, the
 * `switchyard` command, `npm run demo`), from the built output, with the
 * default worker count: no WORKERS in the environment, so one worker per core
 * on a multi-core machine.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(ROOT, 'bin', 'switchyard.mjs');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function get(port: number, path: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('no answer')));
    req.end();
  });
}

interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** The whole process group (npm, the launcher, the primary, the workers). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A command in a process group of its own, with only the environment given (plus PATH and HOME). */
function run(command: string, args: string[], env: Record<string, string>): Run {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(text, timeoutMs = 240_000) {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before "${text}"; stdout:\n${out}\nstderr:\n${err}`);
        if (Date.now() > deadline) throw new Error(`no "${text}" within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // already gone
        }
      }
      const code = await exited;
      // Nothing of the group is left behind.
      for (let i = 0; i < 400; i++) {
        try {
          process.kill(-child.pid!, 0);
        } catch {
          return code;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error('processes of the group outlived the command');
    },
  };
}

/** Both workers answered /health (each connection goes to the next worker). */
async function workersAnswering(port: number, want: number): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let i = 0; i < 40 && seen.size < want; i++) seen.add((await get(port, '/health')).json.worker);
  return seen;
}

describe('the README commands with the default worker count', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-entry-'));
  const cores = availableParallelism();
  let simulator: SimulatedUpstream;
  let upstream: string;

  beforeAll(async () => {
    simulator = new SimulatedUpstream({});
    upstream = (await simulator.listen(0, '127.0.0.1')).url;
  });
  afterAll(async () => {
    await simulator.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs on a machine with more than one core (the premise of these tests)', () => {
    expect(cores).toBeGreaterThan(1);
  });

  it('`npm start` starts one worker per core, prints one JSON summary, serves, and stops on Ctrl+C', async () => {
    const port = await freePort();
    const gateway = run('npm', ['start'], { HOST: '127.0.0.1', PORT: String(port), UPSTREAM_URL: upstream, SWITCHYARD_DATA_DIR: join(root, 'start') });
    try {
      // The first run builds (a minute or two on a loaded machine); later ones start from dist/.
      await gateway.waitFor('"msg":"listening"');
      expect([...(await workersAnswering(port, cores))].length).toBe(cores);
      const lines = gateway
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      // No colour codes anywhere, and the gateway's lines are JSON (npm's own banner is not the gateway's).
      expect(gateway.stdout()).not.toMatch(/\u001b\[/);
      const listening = lines.filter((l) => l.includes('"msg":"listening"'));
      expect(listening).toHaveLength(1);
      expect(JSON.parse(listening[0])).toMatchObject({ level: 'info', msg: 'listening', workers: cores, listen: `http://127.0.0.1:${port}` });
      expect(lines.some((l) => JSON.parse(l).msg === 'starting workers')).toBe(true);
      expect(gateway.stdout()).not.toContain('usage:');
    } finally {
      // Ctrl+C at a terminal: the whole foreground group gets SIGINT (npm itself then ends by the signal).
      await gateway.stop('SIGINT');
    }
    expect(gateway.stdout()).toContain('"msg":"stopping"');
    expect(gateway.stderr()).not.toMatch(/error|could not/i);
  }, 300_000);

  it('the `switchyard` command starts the same way', async () => {
    const port = await freePort();
    const gateway = run(process.execPath, [BIN, '--port', String(port)], { HOST: '127.0.0.1', UPSTREAM_URL: upstream, SWITCHYARD_DATA_DIR: join(root, 'bin') });
    try {
      await gateway.waitFor('"msg":"listening"');
      expect(
        JSON.parse(
          gateway
            .stdout()
            .split('\n')
            .find((l) => l.includes('"msg":"listening"'))!,
        ),
      ).toMatchObject({ workers: cores });
      expect((await workersAnswering(port, cores)).size).toBe(cores);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
  }, 300_000);

  it('a port in use stops the whole gateway with a non-zero exit and one line naming PORT', async () => {
    const holder: Server = await new Promise((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    });
    const port = (holder.address() as { port: number }).port;
    try {
      const gateway = run(process.execPath, [BIN], { HOST: '127.0.0.1', PORT: String(port), UPSTREAM_URL: upstream, SWITCHYARD_DATA_DIR: join(root, 'busy') });
      const code = await gateway.stop('SIGCONT');
      expect(code).not.toBe(0);
      const errors = gateway
        .stderr()
        .split('\n')
        .filter((l) => l.trim());
      expect(errors).toEqual([expect.stringMatching(new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use \\(setting server\\.port, variable PORT\\)`))]);
    } finally {
      holder.close();
    }
  }, 300_000);

  it('a setting only a worker checks (an unreachable limits Redis) stops the gateway non-zero with one line naming it', async () => {
    const port = await freePort();
    const gateway = run(process.execPath, [BIN], {
      HOST: '127.0.0.1',
      PORT: String(port),
      UPSTREAM_URL: upstream,
      SWITCHYARD_DATA_DIR: join(root, 'redis'),
      LIMIT_CONCURRENT_REQUESTS: '2',
      LIMITS_REDIS_URL: 'redis://127.0.0.1:1',
    });
    const code = await gateway.stop('SIGCONT');
    expect(code).not.toBe(0);
    const errors = gateway
      .stderr()
      .split('\n')
      .filter((l) => l.trim());
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/LIMITS_REDIS_URL/);
  }, 300_000);

  it('`npm run demo` holds its conversation, keeps serving, and prints a request that works as pasted', async () => {
    const [port, simPort] = await Promise.all([freePort(), freePort()]);
    const demo = run('npm', ['run', 'demo'], { PORT: String(port), SIM_PORT: String(simPort) });
    try {
      await demo.waitFor('curl ');
      expect(demo.stdout()).toContain('tokens, status completed');
      expect(demo.stdout()).toContain('model> calls get_weather');
      expect(demo.stdout()).toMatch(/MCP server "orders" \(a demo tool server the gateway calls\) at http:\/\/127\.0\.0\.1:\d+\/mcp/);
      expect(demo.stdout()).toMatch(/Still serving at http:\/\/127\.0\.0\.1:\d+\/v1; press Ctrl\+C to stop\. Model "switchyard-sim"\. Try:/);
      expect((await get(port, '/health')).status).toBe(200);
      // The printed curl line, run as a shell would run it.
      const curlLine = demo
        .stdout()
        .split('\n')
        .find((l) => l.trim().startsWith('curl '))!
        .trim();
      const curl = run('sh', ['-c', `${curlLine} -sS`], {});
      expect(await curl.stop('SIGCONT')).toBe(0);
      const answer = JSON.parse(curl.stdout()) as { status: string; model: string; output: Array<{ type: string }> };
      expect([answer.status, answer.model, answer.output.at(-1)?.type]).toEqual(['completed', 'switchyard-sim', 'message']);
    } finally {
      await demo.stop('SIGINT');
    }
  }, 300_000);

  it('`npm run demo` against an upstream that is not there stops with one line naming UPSTREAM_URL', async () => {
    const demo = run('npm', ['run', '--silent', 'demo'], { PORT: String(await freePort()), UPSTREAM_URL: 'http://127.0.0.1:9/v1' });
    expect(await demo.stop('SIGCONT')).not.toBe(0);
    const errors = demo
      .stderr()
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('switchyard: building'));
    expect(errors).toEqual([
      expect.stringMatching(/^The demo's requests through the gateway failed \(\d{3}: .*\)\. The upstream is http:\/\/127\.0\.0\.1:9\/v1 \(responses\): check that UPSTREAM_URL/),
    ]);
  }, 300_000);

  it('`npm run example` on a taken port stops with one line naming PORT', async () => {
    const holder: Server = await new Promise((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    });
    const port = (holder.address() as { port: number }).port;
    try {
      const example = run('npm', ['run', '--silent', 'example'], { HOST: '127.0.0.1', PORT: String(port), STORAGE_DRIVER: 'memory' });
      expect(await example.stop('SIGCONT')).not.toBe(0);
      const errors = example
        .stderr()
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('switchyard: building'));
      expect(errors).toEqual([`Port ${port} on 127.0.0.1 is already in use (variable PORT): stop the process holding it or choose another port, e.g. PORT=${port + 1}.`]);
    } finally {
      holder.close();
    }
  }, 300_000);

  it('`npm run demo` with its simulator port busy stops with one line naming SIM_PORT', async () => {
    const holder: Server = await new Promise((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    });
    const simPort = (holder.address() as { port: number }).port;
    try {
      const demo = run('npm', ['run', '--silent', 'demo'], { PORT: String(await freePort()), SIM_PORT: String(simPort) });
      expect(await demo.stop('SIGCONT')).not.toBe(0);
      // A build the run started first says so on stderr; the failure is the line after it.
      const errors = demo
        .stderr()
        .split('\n')
        .filter((l) => l.trim() && !l.startsWith('switchyard: building'));
      expect(errors).toEqual([
        `Port ${simPort} (the simulated upstream, variable SIM_PORT) is already in use: stop the process holding it or choose another port, e.g. SIM_PORT=${simPort + 1}.`,
      ]);
    } finally {
      holder.close();
    }
  }, 300_000);
});
