import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteUsageStore } from '#storage/usage/sqlite-usage.store.js';
import { parseObservabilitySettings } from '../config/observability.config-section.js';
import { LogWriter } from '../logging/log-writer.service.js';
import { UsageModule } from './usage.module.js';
import { UsageRecorder } from './usage-recorder.service.js';

const dir = mkdtempSync(join(tmpdir(), 'sy-usage-shutdown-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('UsageModule shutdown', () => {
  it('writes usage still inside its window at once, and every recorded run is on disk when it returns', async () => {
    const path = join(dir, 'state.sqlite');
    const lines: string[] = [];
    const log = new LogWriter(parseObservabilitySettings({ logFormat: 'json' }), { isTTY: false, write: (line: string) => lines.push(line) });
    // A window no shutdown could wait out within the test's timeout.
    const store = new SqliteUsageStore({ path }, { windowMs: 600_000 });
    const recorder = new UsageRecorder(log, store);
    const module = new UsageModule(recorder, store);
    await module.onModuleInit();
    const at = Date.now();
    for (const model of ['a', 'b', 'a'])
      recorder.record({ owner: 'k', model, surface: 'responses', at, inputTokens: 3, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 });
    const started = performance.now();
    await module.onApplicationShutdown();
    expect(performance.now() - started).toBeLessThan(5_000);
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.prepare('SELECT model, requests, input_tokens AS input FROM usage_minutes ORDER BY model').all();
      expect(rows).toEqual([
        { model: 'a', requests: 2, input: 6 },
        { model: 'b', requests: 1, input: 3 },
      ]);
    } finally {
      db.close();
    }
    expect(lines).toEqual([]);
  });
});
