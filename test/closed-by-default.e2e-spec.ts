import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startGatewayProcess } from './support/process/gateway-process.js';

/**
 * Closed by default: with no API keys the gateway listens on loopback only,
 * and listening elsewhere without keys turns the tools that run code off
 * with one warning line. The first test runs `npm start` as the README does;
 * the others the same entry point from the sources.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The local addresses (hex, as the kernel prints them) of the listening TCP sockets on `port`. */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // 0A: LISTEN.
      if (state === '0A' && local?.endsWith(`:${hexPort}`)) found.push(local.split(':')[0]);
    }
  }
  return found;
}

/** An address of this machine other than loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted (refused: false). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(3_000, () => done(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('closed by default', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-closed-'));
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

  it('`npm start` with no API keys and no HOST listens on 127.0.0.1 only', async () => {
    const port = await freePort();
    const child: ChildProcess = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: String(port), WORKERS: '1', UPSTREAM_URL: upstream, SWITCHYARD_DATA_DIR: join(root, 'start') },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      // The first run builds (a minute or two on a loaded machine); later ones start from dist/.
      const deadline = Date.now() + 240_000;
      while (!out.includes('"msg":"listening"')) {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}; stdout:\n${out}\nstderr:\n${err}`);
        if (Date.now() > deadline) throw new Error(`no start-up line; stdout:\n${out}\nstderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const startup = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"listening"'))!);
      expect(startup.listen).toBe(`http://127.0.0.1:${port}`);
      expect(startup.tools.active.code_interpreter).toMatch(/^runs in the gateway/);
      // The kernel's own table: one listening socket on the port, bound to 127.0.0.1 (0100007F), none on 0.0.0.0 or ::.
      expect(listeningAddresses(port)).toEqual(['0100007F']);
      expect(await accepts('127.0.0.1', port)).toBe(true);
      const external = externalAddress();
      if (external) expect(await accepts(external, port)).toBe(false);
      expect(out).not.toContain('code execution is off');
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
      await exited;
    }
  }, 300_000);

  it('HOST=0.0.0.0 without keys listens on every interface with code execution off and one warning line', async () => {
    const gateway = await startGatewayProcess({ HOST: '0.0.0.0', UPSTREAM_URL: upstream, STORAGE_DRIVER: 'memory', SWITCHYARD_DATA_DIR: join(root, 'open') });
    try {
      const port = Number(new URL(gateway.url).port);
      expect(listeningAddresses(port)).toEqual(expect.arrayContaining([expect.stringMatching(/^0+$/)]));
      const warnings = gateway.stdout.filter((l) => l.includes('code execution is off'));
      expect(warnings).toHaveLength(1);
      const warning = JSON.parse(warnings[0]);
      expect(warning).toMatchObject({ level: 'warn', host: '0.0.0.0' });
      // The risk and the setting that turns it on, in that one line.
      expect(warning.msg).toMatch(/anyone who reaches the port could run code/);
      expect(warning.msg).toContain('ALLOW_UNAUTHENTICATED_CODE=true');
      // It comes before the start-up line, which lists the tool as off.
      expect(gateway.stdout.findIndex((l) => l.includes('code execution is off'))).toBeLessThan(gateway.stdout.findIndex((l) => l.includes('"msg":"listening"')));
      expect(gateway.startup.tools.inactive.code_interpreter).toMatch(/^off: /);
      expect(gateway.startup.tools.active.code_interpreter).toBeUndefined();

      const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'none', maxRetries: 0 });
      const refused = await client.responses.create({ model: 'sim', input: 'run print(1)', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('tool_disabled');
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools[0].type');
      // Other requests are served as usual.
      const plain = await client.responses.create({ model: 'sim', input: 'hello' });
      expect(plain.status).toBe('completed');
    } finally {
      await gateway.kill();
    }
  }, 120_000);

  it('ALLOW_UNAUTHENTICATED_CODE=true, or API keys, keep code execution on with no warning', async () => {
    const cases: Array<Record<string, string>> = [
      { HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_CODE: 'true' },
      { HOST: '0.0.0.0', API_KEYS: 'k-closed-1' },
    ];
    for (const env of cases) {
      const gateway = await startGatewayProcess({ ...env, UPSTREAM_URL: upstream, STORAGE_DRIVER: 'memory', SWITCHYARD_DATA_DIR: join(root, 'allowed') });
      try {
        expect(gateway.stdout.some((l) => l.includes('code execution is off'))).toBe(false);
        expect(gateway.startup.tools.active.code_interpreter).toMatch(/^runs in the gateway/);
      } finally {
        await gateway.kill();
      }
    }
  }, 120_000);

  it('with API keys and no HOST it listens on every interface, as an authenticated deployment did', async () => {
    // startGatewayProcess sets HOST unless given one: an empty HOST is "unset" to the loader.
    const gateway = await startGatewayProcess({ HOST: '', API_KEYS: 'k-closed-2', UPSTREAM_URL: upstream, STORAGE_DRIVER: 'memory', SWITCHYARD_DATA_DIR: join(root, 'keys') });
    try {
      expect(gateway.startup.listen).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      expect(gateway.stdout.some((l) => l.includes('code execution is off'))).toBe(false);
    } finally {
      await gateway.kill();
    }
  }, 120_000);

  it('a bad ALLOW_UNAUTHENTICATED_CODE stops the boot naming the variable', async () => {
    const gateway = await startGatewayProcess({ HOST: '0.0.0.0', ALLOW_UNAUTHENTICATED_CODE: 'maybe', STORAGE_DRIVER: 'memory' }).then(
      () => null,
      (e: Error) => e,
    );
    expect(gateway?.message).toContain('server.allowUnauthenticatedCode (ALLOW_UNAUTHENTICATED_CODE): must be true or false (got "maybe")');
  }, 120_000);
});
