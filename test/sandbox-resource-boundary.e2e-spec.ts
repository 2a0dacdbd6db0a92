import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { CodeInterpreterToolHandler } from '#tools/code-interpreter/code-interpreter.tool-handler.js';
import { parseProcCgroup } from '#tools/code-interpreter/sandbox/cgroups/sandbox-cgroups.js';
import { SANDBOX_BACKEND } from '#tools/code-interpreter/sandbox/sandbox-backend.interface.js';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';
const OUTPUTS = ['code_interpreter_call.outputs' as const];
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const OWN = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
/** This process's (the gateway's) pids cgroup directory: where the containers' cgroups are made. */
const PIDS_PARENT = join('/sys/fs/cgroup/pids', OWN.get('pids') ?? '/');

/** Host processes whose command line holds `marker` (every process of every user: the host's view). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`).includes(marker)) out.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** The containers' cgroups under the gateway's own (`sy-<kind>-...`). */
const sandboxCgroups = (prefix: string) => readdirSync(PIDS_PARENT).filter((n) => n.startsWith(`sy-${prefix}`));

/**
 * The resource boundary of a container on the real backends: its own cgroup
 * under the gateway's (a process cap, one memory cap for all its processes,
 * a CPU weight below the gateway's), an unprivileged uid, no writable host
 * directory, nothing left running after a call. Every program here bounds
 * itself (a fork bomb of 400 attempts whose children sleep 5 s, writes of
 * 2 GiB in 1 MiB steps that stop at the first refusal, a loop the gateway
 * is expected to kill): a failing test cannot hurt the machine.
 */
describe.each(['kernel', 'cpython'] as const)('the %s backend inside its resource boundary', (backend) => {
  let stack: GatewayStack;
  let client: OpenAI;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `sy-boundary-${backend}-`));
    stack = await startStack({
      config: {
        codeInterpreter: {
          backend,
          dataDir,
          timeoutMs: 60_000,
          // nice 0 and the highest weight below the gateway's: the machine's other work would otherwise starve these programs.
          nice: 0,
          sandbox: { maxProcesses: 64, cpuWeight: 99 },
          kernel: { warm: 0 },
        },
      },
    });
    client = new OpenAI({ baseURL: stack.url, apiKey: 'sk-test', maxRetries: 0, timeout: 180_000 });
  }, 120_000);
  afterAll(async () => {
    await stack.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function call(code: string, container: string | { type: 'auto' } = { type: 'auto' }) {
    const r = await client.responses.create({ model: MODEL, input: `Go. ${run(code)}`, tools: [{ type: 'code_interpreter', container }], include: OUTPUTS });
    const item = r.output.find((i) => i.type === 'code_interpreter_call') as any;
    const logs = (item.outputs ?? []).find((o: any) => o.type === 'logs')?.logs ?? '';
    return { item, logs: String(logs), read: JSON.parse((stack.simulator.requests.at(-1)!.body as any).input.at(-1).output) };
  }

  // The kernel backend's host (one Jupyter server for all the kernels) holds a token. This file's kernel gateway
  // serves to check where it is: a gateway of its own for this test alone started a second host and kernel.
  if (backend === 'kernel') {
    it("keeps the kernel host's token on no command line and in no environment: only in a 0600 file", async () => {
      const { item } = await call('print(1)');
      expect(item.status).toBe('completed');
      const host = (stack.app.get(SANDBOX_BACKEND) as any).host;
      const token: string = host.token;
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(processesWith(token)).toEqual([]);
      const environs = readdirSync('/proc').filter((n) => {
        try {
          return /^\d+$/.test(n) && readFileSync(`/proc/${n}/environ`).includes(token);
        } catch {
          return false;
        }
      });
      expect(environs).toEqual([]);
      const file = join(host.root, 'config', 'jupyter_server_config.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, 'utf8')).toContain(token);
    }, 240_000);
  }

  it('runs as an unprivileged host uid, and a fork bomb (400 attempts) fails at the process cap', async () => {
    const code = [
      'import os, time',
      'ok = failed = 0',
      'for i in range(400):',
      '    try:',
      '        pid = os.fork()',
      '    except OSError:',
      '        failed += 1',
      '        continue',
      '    if pid == 0:',
      '        time.sleep(5)',
      '        os._exit(0)',
      '    ok += 1',
      'print("forked", ok, "failed", failed)',
    ].join('\n');
    const { item, logs } = await call(code);
    expect(item.status).toBe('completed');
    const [, ok, failed] = /forked (\d+) failed (\d+)/.exec(logs)!.map(Number);
    // The cap is 64 for everything in the container (the kernel's own threads count too): most forks fail.
    expect(ok).toBeLessThan(64);
    expect(failed).toBeGreaterThan(336);
    if (backend === 'kernel') {
      // The kernel lives on: every process of its sandbox, seen from the host, is the sandbox uid, not root.
      const kernelId = (stack.app.get(SANDBOX_BACKEND) as any).kernelId(item.container_id);
      const pids = readFileSync(join(PIDS_PARENT, `sy-k-${kernelId}`, 'cgroup.procs'), 'utf8')
        .trim()
        .split('\n');
      expect(pids.length).toBe(3);
      for (const pid of pids) expect(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]).toBe('65534');
    }
  }, 240_000);

  it('refuses a 2 GiB write at the container size bound, fast, and keeps no host file of it', async () => {
    const code = [
      'import errno',
      'chunk = b"x" * (1 << 20)',
      'def fill(path):',
      '    try:',
      '        with open(path, "wb") as f:',
      '            for i in range(2048):',
      '                f.write(chunk)',
      '                f.flush()',
      '        return "wrote all"',
      '    except OSError as e:',
      '        return f"refused errno={e.errno} after {i} MiB"',
      'print("data", fill("/mnt/data/big.bin"))',
      'print("tmp", fill("/tmp/big.bin"))',
      'for p in ["/big.bin", "/usr/big.bin", "/run/jupyter/big.bin", "/mnt/big.bin"]:',
      '    try:',
      '        open(p, "wb").write(b"x")',
      '        print("wrote", p)',
      '    except OSError as e:',
      '        print("refused", p, e.errno)',
    ].join('\n');
    const { item, logs } = await call(code);
    expect(item.status).toBe('completed');
    const data = /data refused errno=28 after (\d+) MiB/.exec(logs);
    const tmp = /tmp refused errno=28 after (\d+) MiB/.exec(logs);
    expect(data).not.toBeNull();
    expect(tmp).not.toBeNull();
    // maxContainerBytes (64 MiB) and the private /tmp (64 MiB): nowhere near 2 GiB.
    expect(Number(data![1])).toBeLessThanOrEqual(70);
    expect(Number(tmp![1])).toBeLessThanOrEqual(70);
    expect(logs).not.toMatch(/^wrote /m);
    // The container's directory on the host took none of it (the file was past the per-call budget).
    const dir = join(dataDir, item.container_id);
    const bytes = readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
  }, 240_000);

  it('stops three children holding 400 MiB each under one 512 MiB limit for the whole container', async () => {
    const child = 'b = bytearray(400 * 1024 * 1024)\\nfor i in range(0, len(b), 4096): b[i] = 1\\nimport time; time.sleep(4)';
    const code = ['import subprocess, sys', `ps = [subprocess.Popen([sys.executable, "-c", "${child}"]) for _ in range(3)]`, 'print("codes", sorted(p.wait() for p in ps))'].join(
      '\n',
    );
    const { logs } = await call(code);
    const codes = /codes \[(-?\d+), (-?\d+), (-?\d+)\]/.exec(logs)!.slice(1).map(Number);
    // At most one child may hold its 400 MiB: the others were killed by the container's OOM killer (SIGKILL).
    expect(codes.filter((c) => c === -9).length).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it('leaves nothing the call started running after it: a background busy loop is gone when the call completes', async () => {
    const marker = `sy-loop-${process.pid}-${backend}`;
    const { item, logs } = await call(`import subprocess\np = subprocess.Popen(["sh", "-c", "while :; do :; done", "${marker}"])\nprint("started", p.pid)`);
    expect(item.status).toBe('completed');
    expect(logs).toMatch(/^started \d+/);
    expect(processesWith(marker)).toEqual([]);
    // The container still works afterwards (the kernel itself was kept).
    const again = await call('print("still here")', item.container_id);
    expect(again.logs).toBe('still here\n');
  }, 240_000);

  it('frees the container directory and its cgroup at once when DELETE /v1/containers/{id} answers', async () => {
    const { item } = await call('open("/mnt/data/a.txt", "w").write("a" * 1000)\nprint("ok")');
    const id = item.container_id as string;
    expect(existsSync(join(dataDir, id))).toBe(true);
    const kernelId = backend === 'kernel' ? (stack.app.get(SANDBOX_BACKEND) as any).kernelId(id) : undefined;
    if (backend === 'kernel') expect(existsSync(join(PIDS_PARENT, `sy-k-${kernelId}`))).toBe(true);
    // A cpython call's cgroup is gone when its call is: none of this container's remains.
    else expect(sandboxCgroups(`c-${id}`)).toEqual([]);
    await client.containers.delete(id);
    expect(existsSync(join(dataDir, id))).toBe(false);
    if (backend === 'kernel') expect(existsSync(join(PIDS_PARENT, `sy-k-${kernelId}`))).toBe(false);
  }, 240_000);
});

describe('a host that gives no cgroup control', () => {
  it('names each missing limit in the start-up summary and serves one owner only', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sy-boundary-none-'));
    const notCgroups = mkdtempSync(join(tmpdir(), 'sy-boundary-notcg-'));
    const stack = await startStack({
      config: { auth: { apiKeys: ['sk-first', 'sk-second'] }, codeInterpreter: { backend: 'cpython', dataDir, sandbox: { cgroupRoot: notCgroups } } },
    });
    try {
      const summary = stack.app.get(CodeInterpreterToolHandler).describe().detail;
      expect(summary).toContain(`MISSING process cap (${notCgroups}/pids is not a cgroup v1 pids hierarchy)`);
      expect(summary).toContain(`memory cap (${notCgroups}/memory is not a cgroup v1 memory hierarchy)`);
      expect(summary).toContain(`CPU weight (${notCgroups}/cpu is not a cgroup v1 cpu hierarchy)`);
      expect(summary).toContain('codeInterpreter.sandbox.allowManyOwnersWithoutLimits');
      const first = new OpenAI({ baseURL: stack.url, apiKey: 'sk-first', maxRetries: 0 });
      const second = new OpenAI({ baseURL: stack.url, apiKey: 'sk-second', maxRetries: 0 });
      await first.containers.create({ name: 'mine' });
      const refused = await second.containers.create({ name: 'theirs' }).catch((e: unknown) => e as { status: number; error: any });
      expect(refused).toMatchObject({ status: 403, error: { code: 'quota_exceeded' } });
      expect((refused as any).error.message).toContain('codeInterpreter.sandbox.allowManyOwnersWithoutLimits');
      // The first owner goes on being served.
      await first.containers.create({ name: 'mine too' });
    } finally {
      await stack.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(notCgroups, { recursive: true, force: true });
    }
  }, 120_000);
});
