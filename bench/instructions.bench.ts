import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ChildService } from './lib/child-service.js';
import { keepAliveAgent, sendOnce } from './lib/load-generator.js';

/**
 * `npm run build && node dist/bench/instructions.bench.js [--vs=<other dist>[,<another>]] [--requests=N] [--warmup=N]`:
 * gateway instructions per request, counted by valgrind's callgrind, for
 * figures that do not move with the machine's load (CPU time does, by a
 * third or more on a shared host). Each gateway child (this build's, then
 * `--vs`'s) runs under callgrind with instrumentation off; per case, after
 * `warmup` requests uncounted, the count is zeroed, instrumentation switched
 * on for `requests` sequential requests (c=1) and the total dumped. The
 * simulator and the MCP server run natively; only the gateway is counted,
 * every thread of its process included.
 */
const arg = (name: string): string | undefined =>
  process.argv
    .find((a) => a.startsWith(`--${name}=`))
    ?.split('=')
    .slice(1)
    .join('=');
const REQUESTS = Number(arg('requests') ?? 100);
const WARMUP = Number(arg('warmup') ?? 50);
const vs = arg('vs');

interface Case {
  name: string;
  body: string;
  expect: string;
}

/** The `totals:` of the newest callgrind dump in `dir` (its `summary:` reads 0 with instrumentation started late). */
function lastTotal(dir: string): number {
  const newest = readdirSync(dir)
    .filter((f) => f.startsWith('cg.'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const line = readFileSync(newest, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('totals:'));
  if (!line) throw new Error(`no totals in ${newest}`);
  return Number(line.split(/\s+/)[1]);
}

const control = (pid: number, ...args: string[]) => execFileSync('callgrind_control', [...args, String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] });

async function measure(label: string, script: string, cases: Case[], config: unknown, dir: string): Promise<Map<string, number>> {
  const out = join(dir, label);
  execFileSync('mkdir', ['-p', out]);
  const gateway = await ChildService.start(`gateway ${label}`, {
    script,
    config,
    execPath: 'valgrind',
    // JIT code is rewritten in place: valgrind must re-read any code not from a file.
    execArgv: ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', '--quiet', `--callgrind-out-file=${join(out, 'cg.%p')}`, process.execPath],
    startTimeoutMs: 900_000,
  });
  const agent = keepAliveAgent(1);
  const target = new URL(`${gateway.url}/responses`);
  const perRequest = new Map<string, number>();
  try {
    for (const c of cases) {
      const body = Buffer.from(c.body);
      const send = async () => {
        const s = await sendOnce(agent, target, body, c.expect, 600_000);
        if (!s.ok) throw new Error(`${c.name} ${label}: ${s.error}`);
      };
      for (let i = 0; i < WARMUP; i++) await send();
      control(gateway.pid, '--zero');
      control(gateway.pid, '--instr=on');
      for (let i = 0; i < REQUESTS; i++) await send();
      control(gateway.pid, '--instr=off');
      control(gateway.pid, `--dump=${c.name}`);
      perRequest.set(c.name, lastTotal(out) / REQUESTS);
      console.error(`${label} ${c.name}: ${Math.round(perRequest.get(c.name)! / 1000)}k instructions/request`);
    }
  } finally {
    agent.destroy();
    await gateway.stop(120_000);
  }
  return perRequest;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'sy-instructions-'));
  const sim = await ChildService.start('simulator', { script: 'simulator-child.js' });
  const mcp = await ChildService.start('mcp-server', { script: 'mcp-server-child.js' });
  const mcpTool = { type: 'mcp', server_label: 'bench', server_url: mcp.url, require_approval: 'never' };
  const plain = (extra: Record<string, unknown>) => JSON.stringify({ model: 'bench', input: '[[tokens 20]]', ...extra });
  const cases: Case[] = [
    { name: 'blocking store:false', body: plain({ store: false }), expect: '"completed"' },
    { name: 'blocking stored', body: plain({ store: true }), expect: '"completed"' },
    { name: 'streaming store:false', body: plain({ store: false, stream: true }), expect: 'response.completed' },
    {
      name: 'one MCP tool round',
      body: JSON.stringify({ model: 'bench', input: 'add [[call bench__add {"a": 1, "b": 2}]]', tools: [mcpTool], store: false }),
      expect: '"completed"',
    },
  ];
  const config = (tag: string) => ({ upstreamUrl: sim.url, sqlitePath: join(dir, `${tag}.sqlite`), mcp: { allowedHosts: [new URL(mcp.url).host] } });
  try {
    // A is this build; each --vs build (comma-separated) is B, C, ..., its ratio taken to the last one (the "before").
    const builds = [
      { label: 'A', script: 'bench-gateway.js' },
      ...(vs?.split(',') ?? []).map((d, i) => ({ label: String.fromCharCode(66 + i), script: join(d, 'bench/bench-gateway.js') })),
    ];
    const counts = [];
    for (const build of builds) counts.push(await measure(build.label, build.script, cases, config(build.label.toLowerCase()), dir));
    const base = counts[counts.length - 1];
    const last = builds[builds.length - 1].label;
    console.log(
      `| case | ${builds.map((x) => `${x.label}: instructions/request`).join(' | ')} | ${builds
        .slice(0, -1)
        .map((x) => `${x.label}/${last}`)
        .join(' | ')} |`,
    );
    console.log(
      `| --- | ${builds.map(() => '---').join(' | ')} | ${builds
        .slice(0, -1)
        .map(() => '---')
        .join(' | ')} |`,
    );
    for (const c of cases) {
      const row = counts.map((m) => Math.round(m.get(c.name)!).toLocaleString('en'));
      const ratios = counts.slice(0, -1).map((m) => (m.get(c.name)! / base.get(c.name)!).toFixed(3));
      console.log(`| ${c.name} | ${row.join(' | ')} | ${ratios.join(' | ')} |`);
    }
  } finally {
    await Promise.all([mcp.stop(), sim.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
