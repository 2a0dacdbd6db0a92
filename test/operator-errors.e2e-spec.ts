import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';
import { spawnGateway } from './support/process/gateway-process.js';

/** Starts the real gateway with one bad setting and returns how it ended. */
async function startWith(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const gateway = spawnGateway({ HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', ...env });
  // It must end by itself: a bad setting never leaves the process hanging.
  const timer = setTimeout(() => void gateway.kill(), 40_000);
  const { code } = await gateway.exited;
  clearTimeout(timer);
  return { code, stderr: gateway.stderr(), stdout: gateway.stdout.join('\n') };
}

/** One line, no stack trace, no Nest injector noise. */
function expectOneLine(stderr: string): string {
  const text = stderr.trim();
  expect(text.split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
  expect(text).not.toMatch(/ExceptionHandler|InstanceLoader|Nest can't resolve/);
  return text;
}

describe('operator errors at start-up: one line naming the setting, and the process exits', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-operr-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('port in use names PORT', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const { code, stderr } = await startWith({ PORT: String(port) });
      expect(code).toBe(1);
      const line = expectOneLine(stderr);
      expect(line).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(line).toContain('PORT');
    } finally {
      holder.close();
    }
  }, 60_000);

  it('STORAGE_DRIVER=postgres without DATABASE_URL names the variable', async () => {
    const { code, stderr } = await startWith({ STORAGE_DRIVER: 'postgres' });
    expect(code).toBe(2);
    const line = expectOneLine(stderr);
    expect(line).toContain('DATABASE_URL');
    expect(line).toContain('STORAGE_DRIVER');
  }, 60_000);

  it('an unreachable database names DATABASE_URL without its password', async () => {
    const { code, stderr } = await startWith({ STORAGE_DRIVER: 'postgres', DATABASE_URL: 'postgres://postgres:pw-very-secret@127.0.0.1:1/test' });
    expect(code).toBe(1);
    const line = expectOneLine(stderr);
    expect(line).toContain('Cannot connect to PostgreSQL');
    expect(line).toContain('DATABASE_URL');
    expect(line).toContain('ECONNREFUSED');
    expect(line).not.toContain('pw-very-secret');
  }, 60_000);

  it('an unwritable SQLITE_PATH names the variable and does not hang', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const { code, stderr } = await startWith({ STORAGE_DRIVER: 'sqlite', SQLITE_PATH: join(file, 'state.sqlite') });
    expect(code).toBe(1);
    const line = expectOneLine(stderr);
    expect(line).toContain('SQLITE_PATH');
    expect(line).toContain(join(file, 'state.sqlite'));
  }, 60_000);

  it('a SQLITE_PATH that is a directory names the variable', async () => {
    const { code, stderr } = await startWith({ STORAGE_DRIVER: 'sqlite', SQLITE_PATH: dir });
    expect(code).toBe(1);
    expect(expectOneLine(stderr)).toContain('SQLITE_PATH');
  }, 60_000);

  it('a JSON config error gives the file, line and column', async () => {
    const file = join(dir, 'bad.json');
    const second = '  "upstream": { "baseUrl": "http://127.0.0.1:8000/v1", }';
    writeFileSync(file, `{\n${second}\n}\n`);
    // The trailing comma is legal; the "}" after it is where JSON says no.
    const column = second.lastIndexOf('}') + 1;
    const { code, stderr } = await startWith({ SWITCHYARD_CONFIG: file });
    expect(code).toBe(2);
    expect(expectOneLine(stderr)).toContain(`${file}:2:${column} is not valid JSON`);
  }, 60_000);

  it('a bad value names the setting and its variable', async () => {
    const { code, stderr } = await startWith({ MAX_ROUNDS: 'lots' });
    expect(code).toBe(2);
    expect(expectOneLine(stderr)).toContain('tools.maxRounds (MAX_ROUNDS): must be an integer (got "lots")');
  }, 60_000);
});

describe('the switchyard command', () => {
  it('--version, --help and check-config answer and exit with the right code', async () => {
    const version = spawnGateway({}, ['--version']);
    expect((await version.exited).code).toBe(0);
    expect(version.stdout.join('\n')).toMatch(/^switchyard \d+\.\d+\.\d+$/);

    const dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, 'upstream: { dialect: grpc }\nserver: { port: -1 }\n');
      const check = spawnGateway({}, ['check-config', file]);
      expect((await check.exited).code).toBe(2);
      const lines = check.stderr().trim().split('\n');
      expect(lines).toEqual([expect.stringContaining('upstream.dialect (UPSTREAM_DIALECT)'), expect.stringContaining('server.port (PORT)')]);
      writeFileSync(file, 'upstream: { dialect: chat }\n');
      const ok = spawnGateway({}, ['check-config', file]);
      expect((await ok.exited).code).toBe(0);
      expect(ok.stdout.join('\n')).toContain('ok:');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('warns of variables that look like settings but are not, at start-up and in check-config', async () => {
    const misspelt = { UPSTREM_URL: 'http://127.0.0.1:9/v1', UPSTREAM_TIMEOUT: '5' };
    const check = spawnGateway({ STORAGE_DRIVER: 'memory', ...misspelt }, ['check-config']);
    expect((await check.exited).code).toBe(0);
    expect(check.stdout).toEqual([
      'ok: the environment gives a valid configuration',
      'warning: UPSTREAM_TIMEOUT is set but is not a setting; it is ignored',
      'warning: UPSTREM_URL is set but is not a setting (did you mean UPSTREAM_URL?); it is ignored',
    ]);
    const gateway = spawnGateway({ HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', ...misspelt });
    try {
      await gateway.waitForLine((line) => line.includes('"msg":"listening"'));
      const warned = gateway.stdout.filter((line) => line.includes('is set but is not a setting'));
      expect(warned).toHaveLength(2);
      expect(warned.join('\n')).toContain('did you mean UPSTREAM_URL?');
      // Names only: the value never reaches the log.
      expect(warned.join('\n')).not.toContain('127.0.0.1:9');
    } finally {
      await gateway.kill();
    }
  }, 60_000);

  it('names an upstream it cannot reach as UPSTREAM_URL at start-up, and starts all the same', async () => {
    const gateway = spawnGateway({ HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', UPSTREAM_URL: 'http://127.0.0.1:9/v1' });
    try {
      const warning = await gateway.waitForLine((line) => line.includes('is unreachable'));
      expect(JSON.parse(warning)).toMatchObject({
        level: 'warn',
        msg: expect.stringMatching(/^upstream\.baseUrl \(UPSTREAM_URL\) http:\/\/127\.0\.0\.1:9\/v1 is unreachable \(ECONNREFUSED\)/),
      });
      await gateway.waitForLine((line) => line.includes('"msg":"listening"'));
    } finally {
      await gateway.kill();
    }
    // A simulated upstream alone: the gateway of a whole stack in front of it went unused.
    const reachable = new SimulatedUpstream();
    const { url: reachableUrl } = await reachable.listen(0, '127.0.0.1');
    try {
      const healthy = spawnGateway({ HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', UPSTREAM_URL: reachableUrl });
      try {
        await healthy.waitForLine((line) => line.includes('"msg":"listening"'));
        // The look takes one round trip to the simulator: give it that before reading the log.
        await new Promise((r) => setTimeout(r, 500));
        expect(healthy.stdout.filter((line) => line.includes('unreachable'))).toEqual([]);
      } finally {
        await healthy.kill();
      }
    } finally {
      await reachable.close();
    }
  }, 60_000);

  it('--config and --port override SWITCHYARD_CONFIG and PORT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-'));
    const file = join(dir, 'gateway.json');
    writeFileSync(file, JSON.stringify({ storage: { driver: 'memory' }, upstream: { defaultModel: 'from-flag-file' } }));
    // PORT and SWITCHYARD_CONFIG are both unusable: only the flags make this start.
    const gateway = spawnGateway({ HOST: '127.0.0.1', PORT: '99999', SWITCHYARD_CONFIG: join(dir, 'missing.json') }, ['--config', file, '--port', '0']);
    try {
      const startup = JSON.parse(await gateway.waitForLine((l) => l.includes('"msg":"listening"')));
      expect(startup.upstream.default_model).toBe('from-flag-file');
      expect(startup.listen).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${startup.listen}/health`)).status).toBe(200);
    } finally {
      await gateway.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('operator errors on requests', () => {
  let stack: GatewayStack;
  const LIMIT = 64 * 1024;

  beforeAll(async () => {
    stack = await startStack({ config: { server: { bodyLimitBytes: LIMIT } } });
  });
  afterAll(() => stack.close());

  const post = (path: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${stack.url.replace(/\/v1$/, '')}${path}`, { method: 'POST', headers, body });

  it('a body over the limit states the limit and the setting', async () => {
    const body = JSON.stringify({ model: 'm', input: 'x'.repeat(LIMIT * 2) });
    const res = await post('/v1/responses', body);
    expect(res.status).toBe(413);
    const { error } = (await res.json()) as any;
    expect(error.code).toBe('request_too_large');
    expect(error.message).toContain(`limit of ${LIMIT} bytes`);
    expect(error.message).toContain(`${Buffer.byteLength(body)} bytes`);
    expect(error.message).toContain('BODY_LIMIT_BYTES');
    expect(error.message).toContain('server.bodyLimitBytes');
  });

  it('a body sent without a JSON content type says so (415), on both surfaces', async () => {
    const body = JSON.stringify({ model: 'm', input: 'hi' });
    const res = await post('/v1/responses', body, { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    const { error } = (await res.json()) as any;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type' });
    expect(error.message).toContain('Content-Type: application/json');
    expect(error.message).toContain('text/plain');
    const none = await post('/v1/responses', body, {});
    expect(none.status).toBe(415);
    expect(((await none.json()) as any).error.message).toMatch(/Content-Type/);
    const messages = await post('/v1/messages', body, { 'content-type': 'text/plain' });
    expect(messages.status).toBe(415);
    expect(((await messages.json()) as any).type).toBe('error');
    // Refused before routing, still counted under the route it was sent to.
    const metrics = await (await fetch(`${stack.url.replace(/\/v1$/, '')}/metrics`)).text();
    expect(metrics).toContain('switchyard_http_requests_total{method="POST",route="/v1/responses",status="415"} 2');
    expect(metrics).toContain('switchyard_http_requests_total{method="POST",route="/v1/messages",status="415"} 1');
  });

  it('a body with a JSON content type still works, and a bodiless GET is not affected', async () => {
    const ok = await post('/v1/responses', JSON.stringify({ model: 'm', input: 'hi' }));
    expect(ok.status).toBe(200);
    const models = await fetch(`${stack.url}/models`);
    expect(models.status).toBe(200);
  });

  it('an unknown route names the method and path (and not its query)', async () => {
    const res = await fetch(`${stack.url}/respones?api_key=leak-me`);
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as any;
    expect(error.code).toBe('not_found');
    expect(error.message).toContain('GET /v1/respones');
    expect(error.message).not.toContain('leak-me');
    const metrics = await (await fetch(`${stack.url.replace(/\/v1$/, '')}/metrics`)).text();
    expect(metrics).toContain('switchyard_http_requests_total{method="GET",route="(unmatched)",status="404"} 1');
  });
});
