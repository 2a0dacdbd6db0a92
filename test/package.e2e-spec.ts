import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { childEnv, compileProject, npmInstall, packedTarball, REPO as repo, repoPackage, writeConsumerTsconfig } from './support/packed-package.js';

/**
 * The package as a consumer gets it: `npm pack` (shared with the plugin-project
 * test: one pack of this tree), installed from the tarball into a scratch Nest
 * application outside the repository (the example app's sources, which import
 * only `switchyard-gateway` and `switchyard-gateway/microservice`), compiled
 * with `tsc` against the shipped declarations, booted, and used. The npm cache
 * is reused (`--prefer-offline`): nothing here needs the network once the
 * repository's own install has run.
 */
const run = promisify(execFile);
const NATS_URL = 'nats://127.0.0.1:4222';

/** The host's dependencies, at the versions the repository itself is tested with. */
function hostDependencies(tarball: string): Record<string, string> {
  const dev = repoPackage.devDependencies as Record<string, string>;
  const pick = ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', '@nestjs/microservices', '@nats-io/transport-node', 'rxjs', 'reflect-metadata', '@types/node'];
  return { 'switchyard-gateway': `file:${tarball}`, ...Object.fromEntries(pick.map((name) => [name, dev[name]])) };
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolvePromise(match);
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`exited with ${code} before printing ${pattern}: ${err || out}`)));
  });
}

/**
 * Ends a child and resolves once it is gone and its stdio pipes are closed:
 * a child only signalled (the host drains its HTTP server and NATS link on
 * SIGTERM) would outlive the suite and keep this test worker from exiting.
 */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    // Already exited; its pipes may still be draining.
    return child.stdout?.closed === false || child.stderr?.closed === false ? once(child, 'close').then(() => undefined) : Promise.resolve();
  }
  const closed = once(child, 'close').then(() => undefined);
  child.kill();
  return closed;
}

describe('the published package, from outside the repository', () => {
  let scratch: string;
  let tarball: string;
  let simulator: SimulatedUpstream;
  let simulatorUrl: string;
  const children: ChildProcess[] = [];
  const prefix = `pack-${randomUUID()}.`;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-host-'));
    // `prepack` builds the package (tsc, declarations included) when a source changed.
    tarball = await packedTarball();
    const app = join(scratch, 'app');
    cpSync(join(repo, 'apps/example/src'), join(app, 'src'), { recursive: true, filter: (f) => !f.endsWith('.spec.ts') && !f.endsWith('.test.ts') });
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'scratch-host', private: true, type: 'module', dependencies: hostDependencies(tarball), overrides: repoPackage.overrides }, null, 2),
    );
    writeConsumerTsconfig(app);
    await npmInstall(app);
    simulator = new SimulatedUpstream();
    simulatorUrl = (await simulator.listen(0, '127.0.0.1')).url;
  }, 1_200_000);

  afterAll(async () => {
    await Promise.all(children.map(stop));
    await simulator?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const app = () => join(scratch, 'app');

  it('ships built code and declarations only', async () => {
    const { stdout } = await run('tar', ['tzf', tarball], { maxBuffer: 16 * 1024 * 1024 });
    const files = stdout.split('\n').filter(Boolean);
    expect(files).toEqual(expect.arrayContaining(['package/package.json', 'package/dist/src/index.js', 'package/dist/src/index.d.ts', 'package/dist/src/microservice.d.ts']));
    expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    // The gateway's own entry point ships for the `switchyard` command, and the testing kit with the simulated
    // upstream for `switchyard-gateway/testing`; the simulator's own entry point, the demo and the example do not.
    expect(files).toEqual(
      expect.arrayContaining([
        'package/bin/switchyard.mjs',
        'package/dist/apps/gateway/src/main.js',
        'package/dist/apps/testing/src/index.js',
        'package/dist/apps/testing/src/index.d.ts',
        'package/dist/apps/simulator/src/simulated-upstream.js',
      ]),
    );
    const notShipped =
      /\.spec\.|dist\/libs\/.*\/testing\/|dist\/(test|bench)\/|dist\/apps\/(?!gateway\/|testing\/|simulator\/src\/)|dist\/apps\/simulator\/src\/(main\.|testing\/)/;
    expect(files.filter((f) => notShipped.test(f))).toEqual([]);
  });

  it('installs one copy of Nest and no storage driver or Redis client it was not asked for', () => {
    const modules = join(app(), 'node_modules');
    expect(existsSync(join(modules, 'switchyard-gateway/dist/src/index.d.ts'))).toBe(true);
    expect(existsSync(join(modules, 'switchyard-gateway/node_modules/@nestjs'))).toBe(false);
    expect(existsSync(join(modules, 'better-sqlite3'))).toBe(false);
    expect(existsSync(join(modules, 'pg'))).toBe(false);
    expect(existsSync(join(modules, 'ioredis'))).toBe(false);
  });

  it('compiles with tsc against the shipped types', async () => {
    await expect(compileProject(app())).resolves.toBeUndefined();
    expect(readdirSync(join(app(), 'dist')).sort()).toEqual(expect.arrayContaining(['main.js', 'dice.tool-module.js', 'nats-client.js']));
  }, 600_000);

  it('boots with its own tool type and serves a request through the simulated upstream, over HTTP and NATS', async () => {
    const env = childEnv({
      UPSTREAM_URL: simulatorUrl,
      HOST: '127.0.0.1',
      PORT: '0',
      STORAGE_DRIVER: 'memory',
      NATS_URL,
      TRANSPORT_PATTERN_PREFIX: prefix,
    });
    const host = spawn(process.execPath, ['dist/main.js'], { cwd: app(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(host);
    const [, url] = await waitForLine(host, /example listening on (http:\S+) with 1 broker/);

    const openai = new OpenAI({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
    const { data: response, response: raw } = await openai.responses
      .create({ model: 'm', input: 'Roll for me [[call roll_dice {"count": 3}]]', tools: [{ type: 'dice', sides: 6 } as never] })
      .withResponse();
    expect(response.output[0]).toMatchObject({ type: 'dice_call', status: 'completed', name: 'roll_dice', output: expect.stringMatching(/^rolled \d, \d, \d on d6$/) });
    expect(response.output_text).toContain('rolled');
    // The host's interceptor timed it; its upstream wrapper added its header per request.
    expect(raw.headers.get('server-timing')).toMatch(/^gateway;dur=\d+(\.\d+)?$/);
    const seen = simulator.requests.filter((r) => r.headers['x-example-request'] === response.id);
    expect(seen.length).toBe(2);
    expect(seen.every((r) => r.headers['x-example-tenant'] === 'example-tenant')).toBe(true);

    // The host's global guard runs on the gateway's routes; the refusal is in the envelope.
    const denied = await fetch(`${url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-example-deny': '1' }, body: '{}' });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { message: string } }).error.message).toBe('This client is on the deny list.');

    // The example's NATS client calls the same gateway as a microservice.
    const { stdout } = await run(process.execPath, ['dist/nats-client.js'], { cwd: app(), env: childEnv({ NATS_URL, TRANSPORT_PATTERN_PREFIX: prefix }) });
    const streamed = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{'))!) as { types: string[]; response: { output: Array<{ type: string }> } };
    expect(streamed.types[0]).toBe('response.created');
    expect(streamed.types.at(-1)).toBe('response.completed');
    expect(streamed.response.output.map((item) => item.type)).toEqual(['dice_call', 'message']);
    await stop(host);
  }, 300_000);

  it('installs the switchyard command, which serves the gateway from the package alone', async () => {
    const bin = join(app(), 'node_modules/.bin/switchyard');
    const version = await run(bin, ['--version'], { cwd: app(), env: childEnv({}) });
    expect(version.stdout.trim()).toBe(`switchyard ${repoPackage.version}`);
    const env = childEnv({ UPSTREAM_URL: simulatorUrl, HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', WORKERS: '1' });
    const gateway = spawn(bin, [], { cwd: app(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(gateway);
    // The start-up line, in JSON or in text, whichever the log format is.
    const started = await waitForLine(gateway, /"listen":"(http:[^"]+)"|listen=(http:\S+)/);
    const openai = new OpenAI({ baseURL: `${started[1] ?? started[2]}/v1`, apiKey: 'unused', maxRetries: 0 });
    const response = await openai.responses.create({ model: 'm', input: '[[say from the command]]' });
    expect(response.output_text).toBe('from the command');
    await stop(gateway);
  }, 300_000);

  it('loads a plugin packed and installed from its own tarball with --plugin, and serves a request through its tool', async () => {
    // The example's dice module as its plugin package publishes it: compiled against the installed gateway, packed, installed.
    // Its build is the app's: the app compiled these same two sources with the same tsconfig against the same installed
    // gateway ('compiles with tsc against the shipped types'), and a second tsc of them here gave the same files.
    // The plugin-project test compiles them in a project of its own.
    const plugin = join(scratch, 'plugin');
    cpSync(join(repo, 'apps/example/plugin/package.json'), join(plugin, 'package.json'));
    for (const file of ['plugin.js', 'dice.tool-module.js']) cpSync(join(app(), 'dist', file), join(plugin, 'dist', file));
    const { stdout: packed } = await run('npm', ['pack', '--pack-destination', scratch, '--silent'], { cwd: plugin, env: childEnv({}), encoding: 'utf8' });
    const pluginTarball = join(scratch, packed.trim().split('\n').at(-1)!);
    await npmInstall(app(), [`file:${pluginTarball}`]);
    expect(existsSync(join(app(), 'node_modules/switchyard-example-dice/dist/plugin.js'))).toBe(true);

    const bin = join(app(), 'node_modules/.bin/switchyard');
    const env = childEnv({ UPSTREAM_URL: simulatorUrl, HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', WORKERS: '1', LOG_FORMAT: 'json' });
    const gateway = spawn(bin, ['--plugin', 'switchyard-example-dice'], { cwd: app(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(gateway);
    const [line] = await waitForLine(gateway, /\{[^\n]*"msg":"listening"[^\n]*\}/);
    const summary = JSON.parse(line) as { listen: string; plugins: unknown };
    expect(summary.plugins).toEqual([{ name: 'dice', from: 'switchyard-example-dice', tool_types: ['dice (gateway)'] }]);
    // The memory driver without better-sqlite3: the summary says file search cannot run, rather than that it does.
    expect((summary as unknown as { tools: { inactive: Record<string, string> } }).tools.inactive.file_search).toMatch(/^needs the package better-sqlite3/);
    const openai = new OpenAI({ baseURL: `${summary.listen}/v1`, apiKey: 'unused', maxRetries: 0 });
    const response = await openai.responses.create({ model: 'm', input: 'Roll [[call roll_dice {"count": 2}]]', tools: [{ type: 'dice', sides: 4 } as never] });
    expect(response.output[0]).toMatchObject({ type: 'dice_call', status: 'completed', output: expect.stringMatching(/^rolled \d, \d on d4$/) });
    await stop(gateway);
  }, 600_000);

  it('names the missing optional driver when SQLite is chosen without better-sqlite3', async () => {
    const env = childEnv({ UPSTREAM_URL: simulatorUrl, HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'sqlite', SQLITE_PATH: join(scratch, 'state.sqlite') });
    // Bounded, so a start that hangs fails with its output rather than at the test's timeout.
    const failure = await run(process.execPath, ['dist/main.js'], { cwd: app(), env, timeout: 120_000 }).then(
      () => null,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failure?.stderr).toContain("storage.driver 'sqlite' needs the package better-sqlite3");
    expect(failure?.code).toBe(1);
  }, 300_000);
});
