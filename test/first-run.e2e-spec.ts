import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** What the fixture uses of Node, declared inline: loading @types/node would make each compile several times slower. */
const AMBIENT = 'declare const process: { argv: string[] };\ndeclare const console: { log(line: string): void };\n';

/**
 * `npm start` and friends start from dist/ when it is current. Checked on a
 * small project laid out like this one (the real launcher scripts, the real
 * TypeScript compiler), so each start is seconds, not a full build.
 */
describe('start from the built output when it is current', () => {
  let dir: string;
  const source = () => join(dir, 'apps', 'hello', 'src', 'main.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [join(dir, 'scripts', 'run-built.mjs'), 'apps/hello/src/main', ...args], { cwd: dir, encoding: 'utf8' });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-first-run-'));
    cpSync(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'first-run-fixture', type: 'module', private: true }));
    writeFileSync(
      join(dir, 'tsconfig.build.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', rootDir: '.', outDir: 'dist', types: [] }, include: ['apps'] }),
    );
    mkdirSync(join(dir, 'apps', 'hello', 'src'), { recursive: true });
    writeFileSync(source(), `${AMBIENT}const who: string = process.argv[2] ?? 'world';\nconsole.log(\`hello \${who}\`);\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds when there is no build yet, then starts without the compiler, then rebuilds after a change', () => {
    const first = run('operator');
    expect(first.status).toBe(0);
    expect(first.stderr).toContain('building (no build yet)');
    expect(first.stdout.trim()).toBe('hello operator');
    const stamp = join(dir, 'dist', '.build-stamp');
    const output = join(dir, 'dist', 'apps', 'hello', 'src', 'main.js');
    const builtAt = statSync(output).mtimeMs;

    // Current: no compiler run (no message, the output untouched), the arguments still reach the entry.
    const second = run('again');
    expect(second.status).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.stdout.trim()).toBe('hello again');
    expect(statSync(output).mtimeMs).toBe(builtAt);

    // A source newer than the stamp: compiled again before starting.
    writeFileSync(source(), `${AMBIENT}console.log('hello changed');\n`);
    const later = new Date(statSync(stamp).mtimeMs + 5_000);
    utimesSync(source(), later, later);
    const third = run();
    expect(third.stderr).toContain('building (sources changed since the last build)');
    expect(third.stdout.trim()).toBe('hello changed');
    expect(readFileSync(output, 'utf8')).toContain('hello changed');
  }, 120_000);

  it('two starts at once build once: the second waits for the first, then runs the same build', async () => {
    writeFileSync(source(), `${AMBIENT}console.log('hello twice');\n`);
    // Newer than the last build, but not in the future: a source dated after the coming build's
    // start would rightly make the second start build again.
    const later = new Date(Math.max(Date.now(), statSync(join(dir, 'dist', '.build-stamp')).mtimeMs + 1));
    utimesSync(source(), later, later);
    const start = () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [join(dir, 'scripts', 'run-built.mjs'), 'apps/hello/src/main'], { cwd: dir });
        let out = '';
        let err = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (err += c.toString()));
        child.on('exit', (code) => resolve({ code, out, err }));
      });
    const both = await Promise.all([start(), start()]);
    for (const run of both) expect(run).toMatchObject({ code: 0, out: 'hello twice\n' });
    expect(both.filter((r) => r.err.includes('building (')).length).toBe(1);
    expect(existsSync(join(dir, 'dist', '.build-lock'))).toBe(false);
  }, 120_000);

  it('a tree with only dist/ (an image) starts without looking for sources', () => {
    const image = mkdtempSync(join(tmpdir(), 'switchyard-image-'));
    try {
      cpSync(join(dir, 'scripts'), join(image, 'scripts'), { recursive: true });
      cpSync(join(dir, 'dist'), join(image, 'dist'), { recursive: true });
      cpSync(join(dir, 'package.json'), join(image, 'package.json'));
      const out = execFileSync(process.execPath, [join(image, 'scripts', 'run-built.mjs'), 'apps/hello/src/main'], { cwd: image, encoding: 'utf8' });
      expect(out.trim()).toBe('hello twice');
    } finally {
      rmSync(image, { recursive: true, force: true });
    }
  });

  it('the package scripts and the bin go through the launcher, not tsc', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    for (const script of ['start', 'simulator', 'demo']) expect(pkg.scripts[script]).toMatch(/^node scripts\/run-built\.mjs apps\/\w+\/src\/main$/);
    expect(pkg.bin.switchyard).toBe('bin/switchyard.mjs');
    expect(readFileSync(join(ROOT, 'bin', 'switchyard.mjs'), 'utf8')).toContain('runBuilt(');
  });
});
