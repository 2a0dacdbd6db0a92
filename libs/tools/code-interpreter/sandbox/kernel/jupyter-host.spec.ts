import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../../../../../test/support/until.js';
import { DEFAULT_CODE_INTERPRETER_SETTINGS } from '../../config/code-interpreter-settings.js';
import { JupyterHost, serverArgs, writeKernelHost } from './jupyter-host.js';

// The installed Jupyter Server imports the module as it would at start; the handlers' open is called on a stand-in.
const CHECK = String.raw`
import json, logging, switchyard_jupyter as s
class App:
    log = logging.getLogger('check')
class Stop(Exception):
    pass
class Socket:
    def __init__(self):
        self.nodelay = None
    def set_nodelay(self, value):
        self.nodelay = value
        raise Stop()
s._load_jupyter_server_extension(App())
seen = []
for handler in s._kernel_socket_handlers():
    sock = Socket()
    try:
        handler.open(sock, 'kernel-id')
    except Stop:
        pass
    seen.append([handler.__name__, sock.nodelay])
import ctypes
deathsig = ctypes.c_int(-1)
ctypes.CDLL(None).prctl(2, ctypes.byref(deathsig), 0, 0, 0)  # PR_GET_PDEATHSIG
print(json.dumps({'seen': seen, 'deathsig': deathsig.value}))
`;

describe('the kernel host', () => {
  it("loads the server extension that turns Nagle's algorithm off on every kernel WebSocket before the handler opens it, and sets the parent-death signal only in a server the gateway started", () => {
    const settings = { ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'kernel' as const };
    const { root, env } = writeKernelHost(settings, 'a-token-of-the-test-0123');
    try {
      expect(serverArgs(settings, 1, root)).toContain('--ServerApp.jpserver_extensions=switchyard_jupyter=True');
      const check = (extra: Record<string, string>) =>
        JSON.parse(execFileSync(settings.cpython.python, ['-c', CHECK], { env: { ...env, PYTHONPATH: join(root, 'python'), ...extra }, encoding: 'utf8' })) as {
          seen: Array<[handler: string, nodelay: boolean]>;
          deathsig: number;
        };
      const { seen, deathsig } = check({});
      expect(seen.length).toBeGreaterThan(0);
      for (const [, nodelay] of seen) expect(nodelay).toBe(true);
      // Not started by the gateway (an operator's server loading the extension): no parent-death signal.
      expect(deathsig).toBe(0);
      // Started by this process: SIGTERM when it dies.
      expect(check({ SWITCHYARD_PARENT_PID: String(process.pid) }).deathsig).toBe(15);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('writes no directory until its server first starts', async () => {
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('syj-')).length;
    const host = new JupyterHost({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'kernel' });
    expect(host.root).toBeUndefined();
    await host.close();
    // Other suites running beside this one may add their own; this host added none.
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('syj-')).length).toBeLessThanOrEqual(before);
  });

  it('starts again in a directory of its own after its server was stopped from outside, and removes that one on close', async () => {
    const host = new JupyterHost({ ...DEFAULT_CODE_INTERPRETER_SETTINGS, backend: 'kernel' });
    try {
      await host.endpoint();
      const [firstPid, firstRoot] = [host.pid!, host.root!];
      const exited = new Promise<void>((r) => host.onExit(r));
      // As an operator's kill would: the server takes its directory with it.
      process.kill(firstPid, 'SIGTERM');
      await exited;
      await until(
        () => existsSync(firstRoot),
        (present) => !present,
        "the stopped server's directory to be removed",
      );
      const restarted = await until(
        () =>
          host
            .endpoint()
            .then((endpoint) => fetch(`${endpoint.url}/api/kernelspecs`, { headers: { Authorization: `token ${endpoint.token}` } }).then((r) => r.ok))
            .catch(() => false),
        (ok) => ok,
        'the restarted server to answer',
      );
      expect(restarted).toBe(true);
      expect(host.pid).not.toBe(firstPid);
      expect(existsSync(join(host.root!, 'share', 'jupyter', 'kernels'))).toBe(true);
    } finally {
      const root = host.root;
      await host.close();
      expect(root && existsSync(root)).toBe(false);
    }
  }, 90_000);

  it('stops the Jupyter Server, which removes the host directory, when the process that started it is killed without stopping it', async () => {
    const register = fileURLToPath(new URL('../../../../../test/support/process/ts-register.mjs', import.meta.url));
    const child = fileURLToPath(new URL('../../../../../test/support/process/jupyter-host.child.ts', import.meta.url));
    const gateway = spawn(process.execPath, ['--import', register, child], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => gateway.once('exit', r));
    let printed = '';
    const line = await new Promise<string>((resolve, reject) => {
      gateway.stdout!.on('data', (d: Buffer) => {
        printed += d.toString();
        if (printed.includes('\n')) resolve(printed.split('\n')[0]);
      });
      void exited.then(() => reject(new Error(`the host process exited before its server answered: ${printed}`)));
    });
    const { server, root } = JSON.parse(line) as { server: number; root: string };
    expect(existsSync(join(root, 'share'))).toBe(true);
    const alive = () => {
      try {
        process.kill(server, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    // As a crash or the OOM killer would: the host gets no chance to stop its server.
    gateway.kill('SIGKILL');
    await exited;
    await until(alive, (up) => !up, 'the orphaned Jupyter Server to exit');
    await until(
      () => existsSync(root),
      (present) => !present,
      "the orphaned server's directory to be removed",
    );
  }, 90_000);
});
