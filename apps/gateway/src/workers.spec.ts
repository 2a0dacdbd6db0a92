import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_SEMI_SPACE_MIB, cgroupCpuLimit, workerCount, workerExecArgv } from './workers.js';

describe('the default worker count follows the cgroup CPU quota', () => {
  const roots: string[] = [];
  const cgroup = (files: Record<string, string>): string => {
    const root = mkdtempSync(join(tmpdir(), 'sy-cgroup-'));
    roots.push(root);
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(root, file, '..'), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    return root;
  };
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('reads cgroup v2 cpu.max: a quota in CPUs, none for "max"', () => {
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': '150000 100000\n' }))).toBe(1.5);
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': 'max 100000\n' }))).toBeNull();
  });

  it('reads cgroup v1 cfs_quota_us / cfs_period_us; -1 is no quota', () => {
    expect(cgroupCpuLimit(cgroup({ 'cpu/cpu.cfs_quota_us': '50000\n', 'cpu/cpu.cfs_period_us': '100000\n' }))).toBe(0.5);
    expect(cgroupCpuLimit(cgroup({ 'cpu,cpuacct/cpu.cfs_quota_us': '-1\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' }))).toBeNull();
    expect(cgroupCpuLimit(cgroup({}))).toBeNull();
  });

  it('runs one worker per CPU of the quota (rounded up, at least 1, at most the cores), or one per core without one', () => {
    const cores = availableParallelism();
    expect(workerCount(undefined, cgroup({ 'cpu.max': '50000 100000' }))).toBe(1);
    expect(workerCount(undefined, cgroup({ 'cpu.max': '100000 100000' }))).toBe(1);
    expect(workerCount(undefined, cgroup({ 'cpu.max': `${cores * 100000 + 1} 100000` }))).toBe(cores);
    expect(workerCount(undefined, cgroup({ 'cpu.max': 'max 100000' }))).toBe(cores);
    // WORKERS wins over the quota.
    expect(workerCount(3, cgroup({ 'cpu.max': '50000 100000' }))).toBe(3);
  });
});

describe('the primary of worker mode', () => {
  it('exits with the failure code when its last worker leaves the list after its exit (its channel outlived it)', async () => {
    const register = fileURLToPath(new URL('../../../test/support/process/ts-register.mjs', import.meta.url));
    const child = fileURLToPath(new URL('../../../test/support/process/failing-workers.child.ts', import.meta.url));
    const primary = spawn(process.execPath, ['--import', register, child], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    primary.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => primary.once('exit', (exitCode) => resolve(exitCode)));
    expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^The gateway could not start: worker \d+ exited during start-up \(exit code 3\)\.$/)]);
    expect(code).toBe(3);
  }, 60_000);
});

describe("a worker's Node options", () => {
  const cap = `--max-semi-space-size=${WORKER_SEMI_SPACE_MIB}`;

  it("are the primary's, with the young generation capped", () => {
    expect(workerExecArgv(['--import', 'x.mjs'], undefined)).toEqual(['--import', 'x.mjs', cap]);
    expect(workerExecArgv([], '--enable-source-maps')).toEqual([cap]);
  });

  it("keep the operator's own semi-space size, given on the command line or in NODE_OPTIONS", () => {
    expect(workerExecArgv(['--max-semi-space-size=16'], undefined)).toEqual(['--max-semi-space-size=16']);
    expect(workerExecArgv(['--max_semi_space_size', '2'], undefined)).toEqual(['--max_semi_space_size', '2']);
    expect(workerExecArgv([], '--enable-source-maps  --max-semi-space-size=32')).toEqual([]);
  });
});
