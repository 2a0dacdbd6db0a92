import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The import boundaries as `npm run lint` enforces them, and the codemod that
 * keeps cross-library imports in alias form. ESLint runs in a child process
 * (its Node API on virtual files), the way the lint script runs it.
 */
const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Finding {
  file: string;
  messages: string[];
}

/** Lints each `{ file: code }` as if it were that repository file; nothing is written. */
async function lint(files: Record<string, string>): Promise<Finding[]> {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = [];
    for (const [file, code] of Object.entries(JSON.parse(process.argv[1]))) {
      const [result] = await eslint.lintText(code, { filePath: file });
      out.push({ file, messages: result.messages.map((m) => (m.ruleId ?? 'fatal') + ': ' + m.message) });
    }
    process.stdout.write(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(files)], { cwd: repo, maxBuffer: 4 * 1024 * 1024 });
  return JSON.parse(stdout) as Finding[];
}

const messagesOf = (findings: Finding[], file: string) => findings.find((f) => f.file === file)!.messages;

describe('import boundaries (ESLint)', () => {
  let findings: Finding[];

  beforeAll(async () => {
    findings = await lint({
      'libs/core/loop/probe.ts': "import { McpToolModule } from '#tools/mcp/mcp-tool.module.js';\nexport const probe = McpToolModule;\n",
      'libs/core/loop/allowed.ts': "import { urlSecrets } from '#config/url-redaction.js';\nexport const probe = urlSecrets;\n",
      'libs/tools/mcp/probe.ts': "import { ResponsesModule } from '#responses/responses.module.js';\nexport const probe = ResponsesModule;\n",
      'libs/tools/web-search/probe.ts': "import { McpToolModule } from '#tools/mcp/mcp-tool.module.js';\nexport const probe = McpToolModule;\n",
      'libs/tools/mcp/relative.ts': "import { newId } from '../../tool-sdk/ids.js';\nexport const probe = newId;\n",
      'libs/tools/mcp/core.ts': "import { LoopService } from '#core/loop/loop.service.js';\nexport const probe = LoopService;\n",
      'libs/tool-sdk/upward.ts': "import { LoopService } from '#core/loop/loop.service.js';\nexport const probe = LoopService;\n",
      'libs/core/loop/probe.spec.ts': "import { McpToolModule } from '#tools/mcp/mcp-tool.module.js';\nexport const probe = McpToolModule;\n",
      'libs/tools/web-search/contract.ts': "import { GatewayError } from '#tool-sdk/index.js';\nexport const probe = GatewayError;\n",
      'libs/tools/web-search/module.ts': "import { GatewayModule } from '#src/gateway.module.js';\nexport const probe = GatewayModule;\n",
      'libs/storage/lazy.ts': "export const load = () => import('#state/state.module.js');\n",
    });
  }, 120_000);

  it('fails an import against the dependency direction: core must not know a tool library', () => {
    expect(messagesOf(findings, 'libs/core/loop/probe.ts')).toEqual([expect.stringMatching(/^switchyard\/dependency-direction: core must not depend on tools\/mcp/)]);
  });

  it('lets core import config, the one library below it', () => {
    expect(messagesOf(findings, 'libs/core/loop/allowed.ts')).toEqual([]);
  });

  it('keeps tool libraries off the surfaces and off each other', () => {
    expect(messagesOf(findings, 'libs/tools/mcp/probe.ts')).toEqual([expect.stringMatching(/tools\/mcp must not depend on responses/)]);
    expect(messagesOf(findings, 'libs/tools/web-search/probe.ts')).toEqual([expect.stringMatching(/tools\/web-search must not depend on tools\/mcp/)]);
  });

  it('lets a tool library import the tool SDK and nothing above it: not core, not src/', () => {
    expect(messagesOf(findings, 'libs/tools/web-search/contract.ts')).toEqual([]);
    expect(messagesOf(findings, 'libs/tools/web-search/module.ts')).toEqual([expect.stringMatching(/tools\/web-search must not depend on src /)]);
    expect(messagesOf(findings, 'libs/tools/mcp/core.ts')).toEqual([expect.stringMatching(/tools\/mcp must not depend on core /)]);
  });

  it('keeps the tool SDK at the bottom: it imports config alone', () => {
    expect(messagesOf(findings, 'libs/tool-sdk/upward.ts')).toEqual([expect.stringMatching(/tool-sdk must not depend on core /)]);
  });

  it('checks dynamic imports too', () => {
    expect(messagesOf(findings, 'libs/storage/lazy.ts')).toEqual([expect.stringMatching(/storage must not depend on state/)]);
  });

  it('asks for the alias when a relative import leaves its library', () => {
    expect(messagesOf(findings, 'libs/tools/mcp/relative.ts')).toEqual([expect.stringContaining("import it as '#tool-sdk/ids.js'")]);
  });

  it('lets a spec reach across libraries: the layers guard what ships', () => {
    expect(messagesOf(findings, 'libs/core/loop/probe.spec.ts')).toEqual([]);
  });
});

describe('the alias codemod (scripts/apply-aliases.mjs)', () => {
  let scratch: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  };
  const read = (path: string) => readFileSync(join(scratch, path), 'utf8');
  const codemod = (...args: string[]) => run(process.execPath, [join(repo, 'scripts/apply-aliases.mjs'), '--root', scratch, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'switchyard-aliases-'));
    write('package.json', JSON.stringify({ name: 'scratch', type: 'module', exports: { '.': './dist/src/index.js' } }, null, 2) + '\n');
    write('libs/core/loop/run.ts', 'export const run = 1;\n');
    write('libs/core/ids.ts', "import { run } from './loop/run.js';\nimport { self } from '#core/loop/run.js';\nexport const ids = run + self;\n");
    write(
      'libs/tools/mcp/handler.ts',
      [
        "import { run } from '../../core/loop/run.js';",
        "import type { X } from '../../core/ids.js';",
        "export * as ids from '../../core/ids.js';",
        "export { local } from './local.js';",
        "const lazy = () => import('../../core/ids.js');",
        "// import { fake } from '../../core/fake.js'",
        "const text = '../../core/ids.js';",
        '',
      ].join('\n'),
    );
    write('libs/edge/owner.ts', "import { ids } from '../core/ids.js';\nexport const owner = ids;\n");
    write('apps/gateway/src/main.ts', "import { owner } from '../../../libs/edge/owner.js';\nimport { sim } from '../../simulator/src/sim.js';\n");
    await codemod();
  }, 60_000);

  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('rewrites every kind of import that leaves its library, and nothing else', () => {
    expect(read('libs/tools/mcp/handler.ts').split('\n')).toEqual([
      "import { run } from '#core/loop/run.js';",
      "import type { X } from '#core/ids.js';",
      "export * as ids from '#core/ids.js';",
      "export { local } from './local.js';",
      "const lazy = () => import('#core/ids.js');",
      "// import { fake } from '../../core/fake.js'",
      "const text = '../../core/ids.js';",
      '',
    ]);
    // apps have no alias of their own: an app reaching another app stays relative.
    expect(read('apps/gateway/src/main.ts')).toBe("import { owner } from '#edge/owner.js';\nimport { sim } from '../../simulator/src/sim.js';\n");
  });

  it('keeps imports within a library relative, turning an alias into its own library back', () => {
    expect(read('libs/core/ids.ts')).toBe("import { run } from './loop/run.js';\nimport { self } from './loop/run.js';\nexport const ids = run + self;\n");
  });

  it('declares an alias for every library folder, new ones included, sources under the source condition', () => {
    const pkg = JSON.parse(read('package.json')) as { imports: Record<string, unknown> };
    expect(Object.keys(pkg)).toEqual(['name', 'type', 'exports', 'imports']);
    expect(pkg.imports).toEqual({
      '#core/*.js': { 'switchyard-source': './libs/core/*.ts', default: './dist/libs/core/*.js' },
      '#edge/*.js': { 'switchyard-source': './libs/edge/*.ts', default: './dist/libs/edge/*.js' },
      '#src/*.js': { 'switchyard-source': './src/*.ts', default: './dist/src/*.js' },
      '#tools/*.js': { 'switchyard-source': './libs/tools/*.ts', default: './dist/libs/tools/*.js' },
    });
  });

  it('is idempotent: a second run changes nothing and --check agrees', async () => {
    const before = read('libs/tools/mcp/handler.ts');
    const { stdout } = await codemod();
    expect(stdout).toContain('rewrote 0 import(s) in 0 file(s)');
    expect(read('libs/tools/mcp/handler.ts')).toBe(before);
    await expect(codemod('--check')).resolves.toBeDefined();
  });

  it('--check fails while an import still needs rewriting', async () => {
    write('libs/tools/mcp/late.ts', "import { run } from '../../core/loop/run.js';\n");
    await expect(codemod('--check')).rejects.toMatchObject({ code: 1, stdout: expect.stringContaining('libs/tools/mcp/late.ts: 1 import(s) to rewrite') });
  });
});
