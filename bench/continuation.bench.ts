import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { NestFactory } from '@nestjs/core';
import { SimulatedUpstream } from '../apps/simulator/src/simulated-upstream.js';
import { validateGatewayConfig } from '#src/gateway-config.loader.js';
import { configureGatewayApp } from '#src/configure-app.js';
import { GatewayModule } from '#src/gateway.module.js';
import { median } from './lib/stats.js';

/**
 * `node dist/bench/continuation.bench.js`: what continuing a conversation by
 * `item_reference` costs next to sending the same history inline, on the
 * SQLite store, for 10, 100 and 1 000 history items. Both variants run
 * interleaved in one process against the simulated upstream, so the ratio
 * (references / inline) is the number to read, not the milliseconds; the
 * growth columns show the cost stays linear in the history length.
 */

const SIZES = [10, 100, 1000];
const REPEATS = 15;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-bench-cont-'));
  const sim = new SimulatedUpstream();
  const { url: upstreamUrl } = await sim.listen(0, '127.0.0.1');
  const config = validateGatewayConfig({
    upstream: { baseUrl: upstreamUrl, dialect: 'responses' },
    server: { host: '127.0.0.1', port: 0 },
    storage: { driver: 'sqlite', sqlitePath: join(dir, 'state.sqlite') },
  });
  const app = await NestFactory.create(GatewayModule.forRoot({ config }), { bodyParser: false, logger: false });
  configureGatewayApp(app);
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as { port: number }).port}/v1`;

  const post = async (path: string, body: unknown): Promise<any> => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json();
  };
  const timed = async (body: unknown): Promise<number> => {
    const started = performance.now();
    await post('/responses', body);
    return performance.now() - started;
  };

  const rows: Array<{ items: number; inlineMs: number; referencesMs: number; ratio: number }> = [];
  try {
    for (const size of SIZES) {
      // The history: stored once as the input of one response, so every item has an id to reference.
      const history = Array.from({ length: size }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `history item ${i} with a few words in it` }));
      const seeded = await post('/responses', { model: 'bench', input: [...history, { role: 'user', content: '[[say seeded]]' }], store: true });
      const stored: any[] = [];
      let after: string | undefined;
      for (;;) {
        const page: any = await (await fetch(`${base}/responses/${seeded.id}/input_items?order=asc&limit=100${after ? `&after=${after}` : ''}`)).json();
        stored.push(...page.data);
        if (!page.has_more) break;
        after = page.last_id;
      }
      const items = stored.slice(0, size);
      const inline = { model: 'bench', input: [...items, { role: 'user', content: '[[say ok]]' }], store: false };
      const references = { model: 'bench', input: [...items.map((i) => ({ type: 'item_reference', id: i.id })), { role: 'user', content: '[[say ok]]' }], store: false };
      await timed(inline);
      await timed(references);
      const a: number[] = [];
      const b: number[] = [];
      for (let r = 0; r < REPEATS; r++) {
        a.push(await timed(inline));
        b.push(await timed(references));
      }
      rows.push({ items: size, inlineMs: median(a), referencesMs: median(b), ratio: median(b) / median(a) });
    }
  } finally {
    const closing = app.close();
    (app.getHttpServer() as Server).closeAllConnections();
    await closing;
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }

  console.log('| history items | inline p50 | item_reference p50 | references / inline | growth vs previous size (inline, references) |');
  console.log('| --- | --- | --- | --- | --- |');
  rows.forEach((row, i) => {
    const prev = rows[i - 1];
    const growth = prev ? `${(row.inlineMs / prev.inlineMs).toFixed(1)}×, ${(row.referencesMs / prev.referencesMs).toFixed(1)}×` : '';
    console.log(`| ${row.items} | ${row.inlineMs.toFixed(2)} ms | ${row.referencesMs.toFixed(2)} ms | ${row.ratio.toFixed(2)} | ${growth} |`);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
