import { linkSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startStack, type GatewayStack } from './support/gateway-harness.js';

const MODEL = 'switchyard-sim';
const OUTPUTS = ['code_interpreter_call.outputs' as const];
const run = (code: string) => `[[call code_interpreter ${JSON.stringify({ code })}]]`;
const CANARY = `sy-canary-${process.pid}`;

/** Every link under a directory on the host (there should be none: only the gateway writes there). */
function linksUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isSymbolicLink() || (st.isFile() && st.nlink > 1)) out.push(name);
    else if (st.isDirectory()) out.push(...linksUnder(full).map((n) => `${name}/${n}`));
  }
  return out;
}

/**
 * The link tricks a hostile tenant tries on container files, against the
 * real CPython backend in bubblewrap and the Containers API over the openai
 * client. What a program does cannot put a link on the host (the container
 * is read-only to it); a link planted on the host by other means is refused
 * by every route with a 400, and nothing outside the container is read or
 * written.
 */
describe('container files never follow a link out (CPython backend)', () => {
  let stack: GatewayStack;
  let client: OpenAI;
  let dataDir: string;
  let outside: string;
  const hostFile = () => join(outside, 'host.txt');

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sy-links-'));
    outside = mkdtempSync(join(tmpdir(), 'sy-links-outside-'));
    process.env.SY_LINK_CANARY = CANARY;
    stack = await startStack({ config: { codeInterpreter: { backend: 'cpython', dataDir, timeoutMs: 60_000 } } });
    client = new OpenAI({ baseURL: stack.url, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
  });
  beforeEach(() => writeFileSync(hostFile(), 'host file'));
  afterAll(async () => {
    await stack.close();
    delete process.env.SY_LINK_CANARY;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  async function runIn(container: string | { type: 'auto' }, code: string) {
    const r = await client.responses.create({ model: MODEL, input: `Go. ${run(code)}`, tools: [{ type: 'code_interpreter', container }], include: OUTPUTS });
    return r.output[0] as any;
  }

  async function error(res: Response) {
    return { status: res.status, ...(((await res.json()) as any).error ?? {}) };
  }

  it('links a program leaves in /mnt/data never reach the host; an upload under the name stays inside', async () => {
    const call = await runIn(
      { type: 'auto' },
      [
        'import os',
        `os.symlink(${JSON.stringify(hostFile())}, "w.txt")`,
        'os.symlink("/proc/self/environ", "env.txt")',
        'os.makedirs("sub")',
        'open("sub/a.txt", "w").write("a")',
        'os.link("sub/a.txt", "twin.txt")',
        `os.symlink(${JSON.stringify(outside)}, "out")`,
        'print(sorted(os.listdir(".")))',
      ].join('\n'),
    );
    expect(call.status).toBe('completed');
    const dir = join(dataDir, call.container_id);
    expect(linksUnder(dir)).toEqual([]);
    const files = (await client.containers.files.list(call.container_id)).data.map((f) => f.path).sort();
    // The hard link arrives as a copy of the bytes; the symlinks not at all.
    expect(files).toEqual(['/mnt/data/sub/a.txt', '/mnt/data/twin.txt']);
    const uploaded = await client.containers.files.create(call.container_id, { file: await toFile(Buffer.from('uploaded'), 'w.txt') });
    expect(uploaded.path).toBe('/mnt/data/w.txt');
    expect(readFileSync(join(dir, 'w.txt'), 'utf8')).toBe('uploaded');
    expect(readFileSync(hostFile(), 'utf8')).toBe('host file');
    expect(readdirSync(outside)).toEqual(['host.txt']);
  }, 120_000);

  it('a recorded file replaced on the host by a link to /proc/self/environ is refused for download, copy and file_ids', async () => {
    const box = await client.containers.create({ name: 'victim' });
    const file = await client.containers.files.create(box.id, { file: await toFile(Buffer.from('report'), 'r.txt') });
    const path = join(dataDir, box.id, 'r.txt');
    unlinkSync(path);
    symlinkSync('/proc/self/environ', path);

    const download = await fetch(`${stack.url}/containers/${box.id}/files/${file.id}/content`);
    const body = await download.text();
    expect(body).not.toContain(CANARY);
    expect({ status: download.status, ...JSON.parse(body).error }).toMatchObject({ status: 400, code: 'unsafe_container_file', param: 'file_id' });

    const other = await client.containers.create({ name: 'thief' });
    const copy = await fetch(`${stack.url}/containers/${other.id}/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: file.id }),
    });
    expect(await error(copy)).toMatchObject({ status: 400, code: 'unsafe_container_file', param: 'file_id' });
    expect(readdirSync(join(dataDir, other.id))).toEqual([]);

    const declared = await fetch(`${stack.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [file.id] } }] }),
    });
    expect(await error(declared)).toMatchObject({ status: 400, code: 'unsafe_container_file', param: 'tools[0].container.file_ids[0]' });

    // The program does not see the link either: it is not a file of the container.
    const call = await runIn(box.id, 'import os\nprint(os.listdir("/mnt/data"))');
    expect(call.outputs[0].logs).toBe('[]\n');
  }, 120_000);

  it('an upload under a name that is a link on the host is refused and writes nothing outside', async () => {
    const box = await client.containers.create({ name: 'planted' });
    symlinkSync(hostFile(), join(dataDir, box.id, 'p.txt'));
    const res = await fetch(`${stack.url}/containers/${box.id}/files`, { method: 'POST', body: multipart('p.txt', 'overwrite?') });
    expect(await error(res)).toMatchObject({ status: 400, code: 'unsafe_container_file', param: 'file' });
    expect(readFileSync(hostFile(), 'utf8')).toBe('host file');
  });

  it('a hard link to a host file is refused for download and upload', async () => {
    const box = await client.containers.create({ name: 'hard' });
    const file = await client.containers.files.create(box.id, { file: await toFile(Buffer.from('mine'), 'h.txt') });
    const path = join(dataDir, box.id, 'h.txt');
    unlinkSync(path);
    linkSync(hostFile(), path);
    const download = await fetch(`${stack.url}/containers/${box.id}/files/${file.id}/content`);
    expect(await error(download)).toMatchObject({ status: 400, code: 'unsafe_container_file', message: expect.stringContaining('hard link') });
    const upload = await fetch(`${stack.url}/containers/${box.id}/files`, { method: 'POST', body: multipart('h.txt', 'overwrite?') });
    expect(await error(upload)).toMatchObject({ status: 400, code: 'unsafe_container_file' });
    expect(readFileSync(hostFile(), 'utf8')).toBe('host file');
  });

  it('a directory swapped for a link after its file was recorded: download and delete refuse it, the host directory is untouched', async () => {
    const call = await runIn({ type: 'auto' }, 'import os\nos.makedirs("sub")\nopen("sub/host.txt", "w").write("inside")');
    const [file] = (await client.containers.files.list(call.container_id)).data;
    expect(file.path).toBe('/mnt/data/sub/host.txt');
    const sub = join(dataDir, call.container_id, 'sub');
    rmSync(sub, { recursive: true });
    symlinkSync(outside, sub);
    const download = await fetch(`${stack.url}/containers/${call.container_id}/files/${file.id}/content`);
    expect(await error(download)).toMatchObject({ status: 400, code: 'unsafe_container_file' });
    await client.containers.files.delete(file.id, { container_id: call.container_id });
    expect(readFileSync(hostFile(), 'utf8')).toBe('host file');
    // A run in the container neither follows it nor reports the outside file back.
    const again = await runIn(call.container_id, 'import os\nprint(sorted(os.listdir("/mnt/data")))');
    expect(again.outputs[0].logs).toBe('[]\n');
    expect((await client.containers.files.list(call.container_id)).data).toEqual([]);
    expect(readdirSync(outside)).toEqual(['host.txt']);
  }, 120_000);

  it('names: ".." and a 5,000-character name are 400s naming the field; UTF-8 names are kept as sent', async () => {
    const box = await client.containers.create({ name: 'names' });
    // The multipart parser already drops a bare ".." as a file name: the part then carries no file.
    const dots = await fetch(`${stack.url}/containers/${box.id}/files`, { method: 'POST', body: multipart('..', 'x') });
    expect(await error(dots)).toMatchObject({ status: 400, param: 'file' });
    const long = await fetch(`${stack.url}/containers/${box.id}/files`, { method: 'POST', body: multipart('x'.repeat(5_000), 'x') });
    expect(await error(long)).toMatchObject({ status: 400, code: 'invalid_file_name', param: 'file', message: expect.stringContaining('255 bytes') });
    expect(readdirSync(join(dataDir, box.id))).toEqual([]);
    expect(readdirSync(dataDir).every((n) => n.startsWith('cntr_'))).toBe(true);
    const uploaded = await client.containers.files.create(box.id, { file: await toFile(Buffer.from('cv'), 'résumé.md') });
    expect(uploaded.path).toBe('/mnt/data/résumé.md');
    expect(readFileSync(join(dataDir, box.id, 'résumé.md'), 'utf8')).toBe('cv');
    const call = await runIn(box.id, 'import os\nprint(os.listdir("/mnt/data"))');
    expect(call.outputs[0].logs).toBe("['résumé.md']\n");
  }, 120_000);
});

function multipart(filename: string, content: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([content]), filename);
  return form;
}
