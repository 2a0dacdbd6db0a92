import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type GatewayStack, startStack } from './support/gateway-harness.js';

/**
 * The README is a front page: short, every link landing somewhere, and its
 * first request working as written (the curl line and the openai snippet,
 * run against a gateway and the simulated upstream the demo starts).
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));

/** The body of the first fenced block of a language after a heading. */
function block(heading: string, lang: string): string {
  const section = readme.slice(readme.indexOf(heading));
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
  if (!m) throw new Error(`no ${lang} block under ${heading}`);
  return m[1];
}

/** GitHub's anchor for a heading. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  let fence = false;
  const found = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.+)$/.exec(line);
    if (m) found.add(anchor(m[1]));
  }
  return found;
}

describe('the README, a front page', () => {
  it('is short and readable: at most 250 lines, none over 200 characters', () => {
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.filter((l) => l.length > 200)).toEqual([]);
  });

  it('links only to files and headings that exist, from the README and from every guide', () => {
    const broken: string[] = [];
    for (const file of ['README.md', ...docs.map((d) => `docs/${d}`)]) {
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target)) continue;
        const [path, hash] = target.split('#');
        const resolved = path ? resolve(dirname(join(ROOT, file)), path) : join(ROOT, file);
        if (!existsSync(resolved)) broken.push(`${file} → ${target}`);
        else if (hash && resolved.endsWith('.md') && !anchorsOf(resolved).has(hash)) broken.push(`${file} → ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names the two commands exactly as CI and a newcomer run them', () => {
    const commands = block('## Two commands', 'bash');
    expect(commands).toMatch(/^npm ci && npm run demo\s/m);
    expect(commands).toMatch(/^npm test\s/m);
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm test$/m);
  });

  describe('its first request, against the gateway and the simulated upstream', () => {
    let stack: GatewayStack;
    let scratch: string;
    const base = 'http://127.0.0.1:8080/v1';

    beforeAll(async () => {
      stack = await startStack();
      // Inside the repository, so that the snippet's `import 'openai'` resolves as it would after `npm install openai`.
      scratch = mkdtempSync(join(ROOT, 'node_modules', '.readme-'));
    });
    afterAll(async () => {
      await stack?.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    it('the curl line answers with a completed response', async () => {
      const curl = block('## A first request', 'bash')
        .replace(/\\\n\s*/g, '')
        .replace(base, stack.url)
        .trim();
      const { stdout } = await run('sh', ['-c', `${curl} -sS`]);
      const answer = JSON.parse(stdout) as { status: string; model: string; output: Array<{ type: string }> };
      expect([answer.status, answer.model, answer.output.at(-1)?.type]).toEqual(['completed', 'switchyard-sim', 'message']);
    });

    it('the openai snippet prints the answer', async () => {
      const file = join(scratch, 'hello.mjs');
      writeFileSync(file, block('## A first request', 'js').replace(base, stack.url));
      const { stdout } = await run(process.execPath, [file]);
      expect(stdout.trim().length).toBeGreaterThan(0);
      expect(stack.simulator.requests.filter((r) => r.path === '/v1/responses').length).toBeGreaterThanOrEqual(1);
    });
  });
});
