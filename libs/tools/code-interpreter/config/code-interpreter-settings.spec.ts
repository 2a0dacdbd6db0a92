import { CodeInterpreterConfigError, DEFAULT_CODE_INTERPRETER_SETTINGS, parseCodeInterpreterSettings } from './code-interpreter-settings.js';

describe('parseCodeInterpreterSettings', () => {
  it('fills defaults and takes valid overrides', () => {
    expect(parseCodeInterpreterSettings(undefined)).toEqual(DEFAULT_CODE_INTERPRETER_SETTINGS);
    const s = parseCodeInterpreterSettings({ backend: 'cpython', timeoutMs: 5_000, maxWorkers: 4, warmWorkers: 2, cpython: { python: '/opt/py/bin/python3' } });
    expect(s).toMatchObject({ backend: 'cpython', timeoutMs: 5_000, maxWorkers: 4, warmWorkers: 2, cpython: { python: '/opt/py/bin/python3', bwrap: 'bwrap' } });
    const internal = parseCodeInterpreterSettings({ internal: { host: '0.0.0.0', port: 8081, url: 'http://10.0.0.5:8081/', secret: 'x'.repeat(32) } }).internal;
    expect(internal).toEqual({ host: '0.0.0.0', port: 8081, url: 'http://10.0.0.5:8081', secret: 'x'.repeat(32), leaseMs: 10_000 });
    expect(parseCodeInterpreterSettings(undefined).backend).toBe('auto');
    const kernel = parseCodeInterpreterSettings({ backend: 'kernel', nice: 15, kernel: { maxLive: 3, idleMs: 60_000 } });
    expect(kernel).toMatchObject({ backend: 'kernel', nice: 15, kernel: { maxLive: 3, warm: 1, idleMs: 60_000 } });
  });

  it.each([
    [{ backend: 'docker' }, 'codeInterpreter.backend'],
    [{ timeoutMs: 10 }, 'codeInterpreter.timeoutMs'],
    [{ memoryLimitMb: 1.5 }, 'codeInterpreter.memoryLimitMb'],
    [{ warmWorkers: 3, maxWorkers: 2 }, 'codeInterpreter.warmWorkers'],
    [{ timeout: 1000 }, 'codeInterpreter.timeout'],
    [{ cpython: { shell: '/bin/sh' } }, 'codeInterpreter.cpython.shell'],
    [{ dataDir: '' }, 'codeInterpreter.dataDir'],
    [{ wheels: ['/nowhere/pkg-1.0-py3-none-any.whl'] }, 'codeInterpreter.wheels[0]'],
    [{ wheels: ['numpy-2.0-cp312-cp312-linux_x86_64.whl'] }, 'codeInterpreter.wheels[0]'],
    [{ wheels: 'x.whl' }, 'codeInterpreter.wheels'],
    [{ internal: { port: 70000 } }, 'codeInterpreter.internal.port'],
    [{ internal: { url: 'ftp://x' } }, 'codeInterpreter.internal.url'],
    [{ internal: { secret: 'short' } }, 'codeInterpreter.internal.secret'],
    [{ internal: { leaseMs: 10 } }, 'codeInterpreter.internal.leaseMs'],
    [{ internal: { listen: 1 } }, 'codeInterpreter.internal.listen'],
    [{ nice: 20 }, 'codeInterpreter.nice'],
    [{ kernel: { maxLive: 0 } }, 'codeInterpreter.kernel.maxLive'],
    [{ kernel: { warm: -1 } }, 'codeInterpreter.kernel.warm'],
    [{ kernel: { pool: 2 } }, 'codeInterpreter.kernel.pool'],
    [{ kernel: 'big' }, 'codeInterpreter.kernel'],
  ])('refuses %j naming %s', (raw, setting) => {
    expect(() => parseCodeInterpreterSettings(raw)).toThrow(CodeInterpreterConfigError);
    expect(() => parseCodeInterpreterSettings(raw)).toThrow(setting);
  });
});
