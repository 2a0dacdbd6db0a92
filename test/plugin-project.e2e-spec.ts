import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { childEnv, compileProject, npmInstall, packedTarball, REPO as repo, repoPackage, writeConsumerTsconfig } from './support/packed-package.js';

/**
 * A tool type built, tested and loaded the way an outside team does it: the
 * example's dice plugin in a project of its own, outside the repository,
 * with its own `node_modules` and so its own copy of `switchyard-gateway`
 * (installed from this repository's `npm pack` tarball) and of Nest. Its own
 * spec runs there on the package's testing kit, and this repository's
 * gateway entry point (as the pack built it) loads its build with `--plugin <path>`.
 *
 * One install serves the whole file, and the pack is the one the package
 * test uses too (a build when the sources changed, one `npm pack` of the tree,
 * then an install that reuses npm's cache): they are the slow part.
 */
const run = promisify(execFile);

/** What a plugin project depends on: the gateway package, and Nest at the versions the repository is tested with. */
function pluginDependencies(tarball: string): Record<string, string> {
  const dev = repoPackage.devDependencies as Record<string, string>;
  const pick = ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', 'rxjs', 'reflect-metadata', '@types/node'];
  return { 'switchyard-gateway': `file:${tarball}`, ...Object.fromEntries(pick.map((name) => [name, dev[name]])) };
}

describe('a plugin built and tested in its own project', () => {
  let scratch: string;
  let plugin: string;
  let simulator: SimulatedUpstream;
  let upstreamUrl: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-plugin-project-'));
    // `prepack` builds the package (tsc, declarations included) when a source changed.
    const tarball = await packedTarball();

    plugin = join(scratch, 'dice-plugin');
    mkdirSync(join(plugin, 'src'), { recursive: true });
    for (const file of ['plugin.ts', 'dice.tool-module.ts', 'dice.tool-module.test.ts']) cpSync(join(repo, 'apps/example/src', file), join(plugin, 'src', file));
    const manifest = JSON.parse(readFileSync(join(repo, 'apps/example/plugin/package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(plugin, 'package.json'), JSON.stringify({ ...manifest, dependencies: pluginDependencies(tarball), overrides: repoPackage.overrides }, null, 2));
    writeConsumerTsconfig(plugin);
    await npmInstall(plugin);
    // Compiled against the copy of the package the project installed, with its shipped declarations.
    await compileProject(plugin);

    simulator = new SimulatedUpstream();
    upstreamUrl = (await simulator.listen(0, '127.0.0.1')).url;
  }, 1_200_000);

  afterAll(async () => {
    await simulator?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('has its own copy of the gateway package, with the testing kit in it', () => {
    const own = realpathSync(join(plugin, 'node_modules/switchyard-gateway'));
    expect(own.startsWith(realpathSync(scratch))).toBe(true);
    const shipped = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(shipped.exports['./testing']).toEqual({ types: './dist/apps/testing/src/index.d.ts', default: './dist/apps/testing/src/index.js' });
    expect(readFileSync(join(own, 'dist/apps/testing/src/index.d.ts'), 'utf8')).toContain('SimulatedUpstream');
  });

  it("runs the plugin's own spec in its project, on the package's testing kit", async () => {
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', 'dist/dice.tool-module.test.js'], {
      cwd: plugin,
      env: childEnv(),
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect(stdout).toMatch(/^# pass 4$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
    expect(stdout).toContain('ok 3 - waits for the client to approve a roll, then rolls');
  }, 240_000);

  it('is loaded by the gateway entry point with --plugin <path>, and its tool serves requests and refuses bad declarations', async () => {
    const entry = join(plugin, 'dist/plugin.js');
    const env = childEnv({ UPSTREAM_URL: upstreamUrl, HOST: '127.0.0.1', PORT: '0', STORAGE_DRIVER: 'memory', WORKERS: '1', LOG_FORMAT: 'json', REQUEST_LOG: 'false' });
    // The entry point as the pack built it (what `switchyard` runs), not rebuilt under the test by a later source change.
    const main = join(repo, 'dist/apps/gateway/src/main.js');
    const gateway = spawn(process.execPath, [main, '--plugin', entry], { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const summary = await listening(gateway);
      expect(summary.plugins).toEqual([{ name: 'dice', from: entry, tool_types: ['dice (gateway)'] }]);
      const openai = new OpenAI({ baseURL: `${summary.listen}/v1`, apiKey: 'unused', maxRetries: 0 });
      const response = await openai.responses.create({ model: 'm', input: 'Roll [[call roll_dice {"count": 2}]]', tools: [{ type: 'dice', sides: 4 } as never] });
      expect(response.output[0]).toMatchObject({ type: 'dice_call', status: 'completed', output: expect.stringMatching(/^rolled [1-4], [1-4] on d4$/) });
      // The plugin throws its own copy's InvalidRequestError: still a 400 naming the field, not a 500.
      const refused = await openai.responses.create({ model: 'm', input: 'Roll', tools: [{ type: 'dice', sides: 1 } as never] }).catch((err: unknown) => err);
      expect(refused).toMatchObject({ status: 400, error: { param: 'tools[0].sides' } });
    } finally {
      await stop(gateway);
    }
  }, 300_000);
});

/** The start-up summary line, once the gateway listens; the child's output when it exits first. */
function listening(child: ChildProcess): Promise<{ listen: string; plugins: unknown }> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /\{[^\n]*"msg":"listening"[^\n]*\}/.exec(out);
      if (line) resolvePromise(JSON.parse(line[0]) as { listen: string; plugins: unknown });
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`the gateway exited with ${code} before listening: ${err || out}`)));
  });
}

/** Ends the child and resolves once it is gone and its pipes are closed. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = once(child, 'close');
  child.kill();
  await closed;
}
