import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { makeDocx, makePdf } from './support/file-search/documents.js';
import { startGatewayProcess } from './support/process/gateway-process.js';
import { MODULE_RECORDER, readModuleRecord } from './support/process/module-record.js';

/** Packages that must load in worker threads or child processes only, never on the event loop's thread. */
const HEAVY = ['pdf-parse', 'pdfjs-dist', 'mammoth', 'html-to-text', 'htmlparser2', 'gpt-tokenizer', 'pyodide'];
/** Loaded by the feature that needs it, which this gateway (configured by its environment) never uses. */
const ON_FIRST_USE = ['yaml'];

/**
 * The gateway's main thread, after serving uploads, ingestion of every
 * format, a search and a file_search tool call, has loaded none of the
 * parsers, the tokenizer or Pyodide (issue 29: pdf.js's polyfills replace
 * `Array.prototype.push` process-wide once pdf-parse is imported). Nor has
 * any thread of the process loaded Skia (`@napi-rs/canvas`, which pdf.js
 * requires for rendering): a native addon is never unloaded, so it would
 * hold ~20 MiB after the ingestion thread had ended (issue 53).
 */
describe('heavy dependencies stay off the main thread', () => {
  it('after uploads, ingestion of PDF, DOCX, HTML and text, a search and a file_search call', async () => {
    const simulator = new SimulatedUpstream({});
    const { url: upstreamUrl } = await simulator.listen(0, '127.0.0.1');
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-modules-'));
    const record = join(dir, 'modules.json');
    const gateway = await startGatewayProcess({ UPSTREAM_URL: upstreamUrl, STORAGE_DRIVER: 'memory', NODE_OPTIONS: `--import ${MODULE_RECORDER}`, MODULE_RECORD: record });
    try {
      const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 30_000 });
      const uploads = [
        await toFile(await makePdf(['The pump manual mentions impellers.']), 'manual.pdf'),
        await toFile(await makeDocx(['The kettle warranty lasts two years.']), 'kettle.docx'),
        await toFile(Buffer.from('<html><body><p>Harbour opening hours</p></body></html>'), 'harbour.html'),
        await toFile(Buffer.from('plain notes about turbines'), 'notes.txt'),
      ];
      const ids: string[] = [];
      for (const file of uploads) ids.push((await openai.files.create({ file, purpose: 'assistants' })).id);
      const store = await openai.vectorStores.create({ name: 'modules' });
      const batch = await openai.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: ids }, { pollIntervalMs: 50 });
      expect(batch.file_counts).toMatchObject({ completed: 4, failed: 0 });
      expect((await openai.vectorStores.search(store.id, { query: 'warranty' })).data[0].file_id).toBe(ids[1]);
      const response = await openai.responses.create({
        model: 'm',
        input: `Warranty? [[call file_search ${JSON.stringify({ queries: ['kettle warranty'] })}]]`,
        tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
        include: ['file_search_call.results'],
      });
      expect(response.output[0]).toMatchObject({ type: 'file_search_call', status: 'completed' });
      expect((response.output[0] as any).results[0].file_id).toBe(ids[1]);

      // Native libraries the process mapped, from any thread: SQLite's is there, Skia's is not. Read
      // while it runs: SIGUSR2 below is also one of Nest's shutdown signals, and an exited process maps nothing.
      const libraries = new Set(
        readFileSync(`/proc/${gateway.child.pid}/maps`, 'utf8')
          .split('\n')
          .map((line) => line.split(/\s+/)[5])
          .filter((path) => !!path && /\.(node|so)\b/.test(path)),
      );
      expect([...libraries].some((path) => path.endsWith('/better_sqlite3.node'))).toBe(true);
      expect([...libraries].filter((path) => /@napi-rs\/canvas|skia/.test(path))).toEqual([]);

      const seen = await readModuleRecord(gateway, record, 'SIGUSR2');
      // The recorder sees the gateway's own modules, so an empty list cannot pass for a clean one.
      expect(seen.modules.some((u) => u.includes('/libs/tools/file-search/ingestion/extraction-pool'))).toBe(true);
      expect(seen.modules.some((u) => u.includes('/node_modules/@nestjs/core/'))).toBe(true);
      const heavy = seen.modules.filter((u) => HEAVY.some((name) => u.includes(`/node_modules/${name}/`)));
      expect(heavy).toEqual([]);
      expect(seen.modules.filter((u) => ON_FIRST_USE.some((name) => u.includes(`/node_modules/${name}/`)))).toEqual([]);
      expect(seen.pushIsNative).toBe(true);
      expect(seen.parseIsNative).toBe(true);
    } finally {
      await gateway.kill();
      await simulator.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
