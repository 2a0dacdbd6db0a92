import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import { SandboxBoundary } from './sandbox-boundary.js';
import { CgroupHost, parseProcCgroup } from './sandbox-cgroups.js';
import { until } from '../../../../../test/support/until.js';

const limits = { maxProcesses: 16, memoryBytes: 64 * 1024 * 1024, cpuWeight: 10 };
/** A process that exists and is not a zombie. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
/** The command names of `pids` (from /proc/<pid>/comm), sorted; a process gone meanwhile has none. */
function names(pids: number[]): string[] {
  return pids
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/comm`, 'utf8').trim()];
      } catch {
        return [];
      }
    })
    .sort();
}
const name = () => `spec-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** A shell in the cgroup (joined through the boundary's own wrapper), which starts `children` sleeping children and waits. */
function shellIn(boundary: SandboxBoundary, cg: ReturnType<SandboxBoundary['create']>, script: string) {
  const [cmd, ...args] = boundary.wrap(cg, ['/bin/sh', '-c', script]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, done, out: () => out };
}

describe('parseProcCgroup', () => {
  it('reads v1 controllers (comma lists split) and the v2 entry', () => {
    const m = parseProcCgroup('12:cpu,cpuacct:/a/b\n8:pids:/\n4:memory:/process_api/x\n0::/unified/path\n');
    expect(m.get('cpu')).toBe('/a/b');
    expect(m.get('cpuacct')).toBe('/a/b');
    expect(m.get('pids')).toBe('/');
    expect(m.get('memory')).toBe('/process_api/x');
    expect(m.get('')).toBe('/unified/path');
  });
});

describe('CgroupHost on this host', () => {
  const host = CgroupHost.detect(DEFAULT_CODE_INTERPRETER_SETTINGS.sandbox.cgroupRoot);
  const own = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));

  it('finds the process cap, the memory cap and the CPU weight, each under the gateway own cgroup', () => {
    expect(host.missing).toEqual([]);
    for (const limit of ['processes', 'memory', 'cpu'] as const) expect(host.has(limit)).toBe(true);
    const plan = host.plan('x', limits);
    const byFile = new Map(plan.flatMap((p) => p.files.map((f) => [f.file, p] as const)));
    if (host.version === 1) {
      // Under the very cgroup /proc/self/cgroup names for each controller: nothing elsewhere in the hierarchy.
      expect(byFile.get('pids.max')!.dir).toBe(join('/sys/fs/cgroup/pids', own.get('pids')!, 'sy-x'));
      expect(byFile.get('memory.limit_in_bytes')!.dir).toBe(join('/sys/fs/cgroup/memory', own.get('memory')!, 'sy-x'));
      expect(byFile.get('cpu.shares')!.files.find((f) => f.file === 'cpu.shares')!.value).toBe('102');
    } else {
      expect(byFile.get('pids.max')!.dir).toBe(join('/sys/fs/cgroup', own.get('')!, 'sy-x'));
    }
  });

  it('refuses a name that could reach outside its parent', () => {
    expect(() => host.plan('../x', limits)).toThrow(/not a sandbox cgroup name/);
    expect(() => host.plan('a/b', limits)).toThrow(/not a sandbox cgroup name/);
  });

  it('caps the processes of everything in the cgroup together: a fork bomb (bounded) gets fork failures at the cap', async () => {
    const boundary = new SandboxBoundary({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, sandbox: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.sandbox, maxProcesses: 16 } }, host);
    const cg = boundary.create(name())!;
    try {
      // 40 sleepers asked for, each ending by itself within 20 s: only 16 processes fit (the shell is one).
      const sh = shellIn(boundary, cg, 'for i in $(seq 40); do sleep 20 & done; echo started');
      for (let i = 0; i < 250 && !sh.out().includes('started'); i++) await new Promise((r) => setTimeout(r, 20));
      // The cap, less at most the moment's own subshell.
      expect(cg.pids().length).toBeLessThanOrEqual(16);
      expect(cg.pids().length).toBeGreaterThanOrEqual(14);
      cg.killAll();
      await sh.done;
      expect(sh.out()).toMatch(/fork/i);
    } finally {
      expect(await cg.remove()).toBe(true);
    }
    expect(cg.exists()).toBe(false);
  }, 30_000);

  it('removes the cgroup at once with everything in it, children of children included', async () => {
    const boundary = new SandboxBoundary(DEFAULT_CODE_INTERPRETER_SETTINGS, host);
    const cg = boundary.create(name())!;
    const sh = shellIn(boundary, cg, '(sleep 30 & sleep 30 &) ; sleep 30');
    for (let i = 0; i < 200 && cg.pids().length < 4; i++) await new Promise((r) => setTimeout(r, 20));
    const pids = cg.pids();
    expect(pids.length).toBe(4);
    expect(await cg.remove()).toBe(true);
    await sh.done;
    expect(cg.exists()).toBe(false);
    for (const p of pids) expect(running(p)).toBe(false);
  }, 30_000);

  it('runs what it wraps as the sandbox uid when the gateway is root', async () => {
    const boundary = new SandboxBoundary(DEFAULT_CODE_INTERPRETER_SETTINGS, host, 0);
    const cg = boundary.create(name())!;
    try {
      const sh = shellIn(boundary, cg, 'id -u; id -g; id -G');
      expect(await sh.done).toBe(0);
      expect(sh.out().trim().split('\n')).toEqual(['65534', '65534', '65534']);
    } finally {
      await cg.remove();
    }
  });

  it('kills what a call left in a kernel sandbox and keeps the chain of the sandbox itself (the oldest at each level)', async () => {
    const boundary = new SandboxBoundary(DEFAULT_CODE_INTERPRETER_SETTINGS, host);
    const cg = boundary.create(name())!;
    try {
      // top (the wrapper's shell) → "init" → "kernel" (a sleep, exec'd), which first started a background sleep and an
      // orphaned one (its parent subshell exits): those two go, the chain stays.
      const sh = shellIn(boundary, cg, 'sh -c "sh -c \\"sleep 30 & (sleep 30 &); exec sleep 30\\"; sleep 30" ; sleep 30');
      // Five processes can be counted before this (the subshell still there, or a child not yet exec'd into `sleep`):
      // two shells and three sleeps are there only once the kernel has exec'd, after its subshell was reaped.
      await until(
        () => names(cg.running()),
        (n) => n.join() === 'sh,sh,sleep,sleep,sleep',
        'the two shells and three sleeps',
      );
      const before = cg.running();
      expect(before).toHaveLength(5);
      expect(await cg.killAllButKernel()).toBe(2);
      // SIGKILLed processes exit on the kernel's time: wait for them to be gone, then the chain is what is left.
      const left = await until(
        () => cg.running(),
        (pids) => pids.length <= 3,
        'the two killed processes to be gone',
      );
      expect(left.every((p) => before.includes(p))).toBe(true);
      expect(names(left)).toEqual(['sh', 'sh', 'sleep']);
      expect(sh.child.exitCode).toBeNull();
    } finally {
      await cg.remove();
    }
  }, 60_000);
});

describe('CgroupHost where the root is not a cgroup file system', () => {
  it('names each missing limit with its reason, and the boundary serves one owner unless told otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-nocgroup-'));
    try {
      const host = CgroupHost.detect(dir);
      expect(host.version).toBeNull();
      expect(host.missing.map((m) => m.limit)).toEqual(['processes', 'memory', 'cpu']);
      expect(host.missing[0].why).toContain(`${dir}/pids is not a cgroup v1 pids hierarchy`);
      const settings = { ...DEFAULT_CODE_INTERPRETER_SETTINGS, sandbox: { ...DEFAULT_CODE_INTERPRETER_SETTINGS.sandbox, cgroupRoot: dir } };
      const boundary = new SandboxBoundary(settings, host);
      expect(boundary.create('x')).toBeUndefined();
      expect(boundary.singleOwner).toBe(true);
      expect(boundary.describe()).toMatch(/MISSING process cap .*; memory cap .*; CPU weight .*one owner only is served \(codeInterpreter\.sandbox\.allowManyOwnersWithoutLimits/);
      const allowed = new SandboxBoundary({ ...settings, sandbox: { ...settings.sandbox, allowManyOwnersWithoutLimits: true } }, host);
      expect(allowed.singleOwner).toBe(false);
      expect(allowed.describe()).toMatch(/serving many owners without them/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
