import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerDir, ContainerFileNameError, UnsafeContainerFileError, containerPathParts } from './container-fs.js';

describe('ContainerDir: container files never follow a link out', () => {
  let root: string;
  let box: string;
  let outside: string;
  let dir: ContainerDir;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-container-fs-'));
    box = join(root, 'box');
    outside = join(root, 'outside');
    mkdirSync(box);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'host secret');
    dir = new ContainerDir(box);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads, writes, lists and removes plain files, creating directories', async () => {
    await dir.write('a/b/c.txt', new TextEncoder().encode('hello'));
    expect((await dir.read('a/b/c.txt')).toString()).toBe('hello');
    expect([...(await dir.list()).keys()]).toEqual(['a/b/c.txt']);
    expect(await dir.remove('a/b/c.txt')).toBe(true);
    expect(await dir.remove('a/b/c.txt')).toBe(false);
  });

  it('refuses names that are not plain relative paths', () => {
    for (const bad of ['', '..', '../x', 'a/../b', '/etc/passwd', 'a//b', './a', 'a\0b', 'line\nbreak', 'x'.repeat(256), `${'d/'.repeat(40)}f`]) {
      expect(() => containerPathParts(bad)).toThrow(ContainerFileNameError);
    }
    expect(containerPathParts('résumé.md')).toEqual(['résumé.md']);
  });

  it('refuses to read or write through a symlink to a host file, and removes the link, not its target', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(box, 'w.txt'));
    symlinkSync('/proc/self/environ', join(box, 'env.txt'));
    await expect(dir.read('w.txt')).rejects.toThrow(UnsafeContainerFileError);
    await expect(dir.read('env.txt')).rejects.toThrow(UnsafeContainerFileError);
    await expect(dir.write('w.txt', new Uint8Array([1]))).rejects.toThrow(UnsafeContainerFileError);
    expect(await dir.stat('w.txt')).toBeUndefined();
    expect([...(await dir.list()).keys()]).toEqual([]);
    expect(await dir.remove('w.txt')).toBe(true);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('host secret');
  });

  it('refuses a hard link to a file outside (nlink > 1)', async () => {
    linkSync(join(outside, 'secret.txt'), join(box, 'h.txt'));
    await expect(dir.read('h.txt')).rejects.toThrow(/hard link/);
    await expect(dir.write('h.txt', new Uint8Array([1]))).rejects.toThrow(UnsafeContainerFileError);
    expect([...(await dir.list()).keys()]).toEqual([]);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('host secret');
  });

  it('refuses a directory that is a link, for reads, writes, deletes and listings', async () => {
    symlinkSync(outside, join(box, 'sub'));
    await expect(dir.read('sub/secret.txt')).rejects.toThrow(UnsafeContainerFileError);
    await expect(dir.write('sub/new.txt', new Uint8Array([1]))).rejects.toThrow(UnsafeContainerFileError);
    expect(await dir.remove('sub/secret.txt')).toBe(false);
    expect([...(await dir.list()).keys()]).toEqual([]);
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'secret.txt'))).toBe(true);
  });

  it('does not hang on a FIFO', async () => {
    execFileSync('mkfifo', [join(box, 'pipe')]);
    await expect(dir.read('pipe')).rejects.toThrow(/not a regular file/);
  });

  it('holds while a directory is swapped for a link to a host directory, again and again', async () => {
    mkdirSync(join(box, 'sub'));
    writeFileSync(join(box, 'sub', 'secret.txt'), 'inside');
    let swapping = true;
    const swapper = (async () => {
      for (let i = 0; swapping; i++) {
        // The real directory moves aside and a link takes its place, then back. A write may
        // recreate sub in between (it creates directories): that one is removed.
        try {
          if (i % 2 === 0) {
            renameSync(join(box, 'sub'), join(box, 'real'));
            symlinkSync(outside, join(box, 'sub'));
          } else {
            rmSync(join(box, 'sub'), { recursive: true, force: true });
            renameSync(join(box, 'real'), join(box, 'sub'));
          }
        } catch {
          rmSync(join(box, 'sub'), { recursive: true, force: true });
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const got = await dir.read('sub/secret.txt').then(
        (b) => b.toString(),
        (e: Error) => e.constructor.name,
      );
      seen.add(got);
      await dir.write('sub/written.txt', new Uint8Array([1])).catch(() => undefined);
      await dir.remove('sub/secret-copy.txt');
    }
    swapping = false;
    await swapper;
    expect(seen.has('host secret')).toBe(false);
    expect([...seen].every((s) => s === 'inside' || s === 'UnsafeContainerFileError' || s === 'Error')).toBe(true);
    expect(existsSync(join(outside, 'written.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('host secret');
  });
});
