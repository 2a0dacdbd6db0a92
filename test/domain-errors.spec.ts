import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Below the edge an error says what went wrong by its class and carries no
 * HTTP status (eslint/domain-errors.mjs, run by `npm run lint` over the real
 * tree): these probes are linted as if they were repository files, through
 * ESLint's Node API in a child process as the lint script runs it.
 */
const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

async function lint(files: Record<string, string>): Promise<Record<string, string[]>> {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.cwd() });
    const out = {};
    for (const [file, code] of Object.entries(JSON.parse(process.argv[1]))) {
      const [result] = await eslint.lintText(code, { filePath: file });
      out[file] = result.messages.map((m) => (m.ruleId ?? 'fatal') + ': ' + m.message);
    }
    process.stdout.write(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(files)], { cwd: repo, maxBuffer: 4 * 1024 * 1024 });
  return JSON.parse(stdout) as Record<string, string[]>;
}

const RULE = 'switchyard-errors/no-http-status';
const constructs = (name: string, status: number) => expect.stringMatching(new RegExp(`^${RULE}: ${name} is given the HTTP status ${status}: domain errors carry no status`));
const reads = (key: string) => expect.stringMatching(new RegExp(`^${RULE}: Reading \`${key}\` of a caught error`));

describe('domain errors carry no HTTP status below the edge (ESLint)', () => {
  let findings: Record<string, string[]>;

  beforeAll(async () => {
    findings = await lint({
      'libs/tools/web-search/status-argument.ts':
        "import { InvalidRequestError } from '#tool-sdk/index.js';\nexport const refused = () => new InvalidRequestError('busy', 'batch_id', 'batch_not_cancellable', 409);\n",
      'libs/core/loop/status-super.ts':
        "import { GatewayError } from '#tool-sdk/errors.js';\nexport class DrainingError extends GatewayError {\n  constructor() {\n    super('draining', 503, 'server_error');\n  }\n}\n",
      'libs/tool-sdk/status-read.ts':
        'export async function read(get: () => Promise<unknown>): Promise<unknown> {\n  try {\n    return await get();\n  } catch (e) {\n    if ((e as { status?: number }).status === 404) return undefined;\n    throw e;\n  }\n}\n',
      'libs/tools/mcp/status-callback.ts':
        'export const statusOf = (p: Promise<unknown>) => p.catch((err: { statusCode: number }) => err.statusCode);\nexport const cast = (x: unknown) => (x as { status: number }).status;\n',
      'libs/tools/file-search/clean.ts': [
        "import { NotFoundError, UpstreamHttpError } from '#tool-sdk/errors.js';",
        // An upstream's own status is data; an HTTP client reads its response's status; a test of the class decides.
        "export const upstream = () => new UpstreamHttpError('the model server failed', 503);",
        'export async function fetchJson(url: string): Promise<unknown> {',
        '  const res = await fetch(url);',
        '  try {',
        "    if (res.status === 404) throw new NotFoundError('gone');",
        '    return await res.json();',
        '  } catch (e) {',
        '    if (e instanceof NotFoundError) return undefined;',
        '    throw e;',
        '  }',
        '}',
        '',
      ].join('\n'),
      'libs/edge/errors/at-the-edge.ts': 'export const status = (e: unknown) => { try { throw e; } catch (err) { return (err as { status?: number }).status; } };\n',
      'libs/core/loop/probe.spec.ts':
        "import { InvalidRequestError } from '#tool-sdk/errors.js';\nexport const probe = () => new (InvalidRequestError as any)('m', null, 'c', 409);\n",
    });
  }, 120_000);

  it('fails an error constructed with a status, in a tool library and in a super call in core', () => {
    expect(findings['libs/tools/web-search/status-argument.ts']).toEqual([constructs('InvalidRequestError', 409)]);
    expect(findings['libs/core/loop/status-super.ts']).toEqual([constructs('GatewayError', 503)]);
  });

  it('fails a status read off a caught error: a catch clause, a .catch callback, a cast that declares status', () => {
    expect(findings['libs/tool-sdk/status-read.ts']).toEqual([reads('status')]);
    expect(findings['libs/tools/mcp/status-callback.ts']).toEqual([reads('statusCode'), reads('status')]);
  });

  it("lets domain code test the class, carry an upstream's own status, and read an HTTP response it made", () => {
    expect(findings['libs/tools/file-search/clean.ts']).toEqual([]);
  });

  it('leaves the edge, which maps kinds to statuses, and specs alone', () => {
    expect(findings['libs/edge/errors/at-the-edge.ts']).toEqual([]);
    expect(findings['libs/core/loop/probe.spec.ts']).toEqual([]);
  });
});
