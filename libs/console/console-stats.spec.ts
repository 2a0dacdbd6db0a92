import type { UsageRow } from '#storage/usage-store.interface.js';
import { consoleStats, MAX_SERIES, parseStatsRange, statsWindow } from './console-stats.js';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 11, 7, 10, 30);

const row = (over: Partial<UsageRow>): UsageRow => ({
  bucketStart: 0,
  owner: 'a',
  model: 'm',
  surface: 'responses',
  requests: 1,
  inputTokens: 10,
  cachedInputTokens: 0,
  outputTokens: 5,
  reasoningTokens: 0,
  runs: 1,
  failedRuns: 0,
  durationMs: 100,
  ...over,
});

describe('console stats', () => {
  it('takes 1h, 24h and 7d, 24h by default, and refuses anything else naming range', () => {
    expect(parseStatsRange(undefined)).toBe('24h');
    expect(parseStatsRange(['7d'])).toBe('7d');
    expect(() => parseStatsRange('2w')).toThrow(expect.objectContaining({ param: 'range' }));
  });

  it('ends the window with the bucket now falls in, in whole buckets', () => {
    const w = statsWindow('24h', now);
    expect([w.to, w.to - w.from, w.bucketMs]).toEqual([Date.UTC(2026, 11, 7, 11), 24 * HOUR, HOUR]);
  });

  it('sums tokens and requests per model and owner, runs, failures and mean latency per bucket', () => {
    const w = statsWindow('24h', now);
    const last = w.to - HOUR;
    const stats = consoleStats('24h', w, [
      row({ bucketStart: last, owner: 'a', model: 'big', inputTokens: 100, durationMs: 300 }),
      row({ bucketStart: last, owner: null, model: 'm', runs: 3, failedRuns: 1, requests: 2, durationMs: 300 }),
      row({ bucketStart: last - HOUR, owner: 'b', model: 'm' }),
      // Outside the window: not counted.
      row({ bucketStart: w.from - HOUR, owner: 'z', model: 'old' }),
    ]);
    expect(stats.buckets).toHaveLength(24);
    expect(stats.by_model.map((s) => [s.key, s.tokens.slice(-2), s.requests.slice(-2)])).toEqual([
      ['big', [0, 105], [0, 1]],
      ['m', [15, 15], [1, 2]],
    ]);
    expect(stats.by_owner.map((s) => s.key)).toEqual(['a', 'no key', 'b']);
    expect([stats.runs.slice(-2), stats.failed_runs.slice(-2), stats.mean_latency_ms.slice(-3)]).toEqual([
      [1, 4],
      [0, 1],
      [null, 100, 150],
    ]);
    expect(stats.totals).toEqual({ runs: 5, failed_runs: 1, requests: 4, input_tokens: 120, output_tokens: 15 });
  });

  it.each([10, 100])('draws at most %s owners as MAX_SERIES series, the smallest summed as other, nothing lost', (owners) => {
    const w = statsWindow('1h', now);
    const rows = Array.from({ length: owners }, (_, i) => row({ bucketStart: w.to - 60_000, owner: `o${String(i).padStart(3, '0')}`, inputTokens: i + 1, outputTokens: 0 }));
    const stats = consoleStats('1h', w, rows);
    expect(stats.by_owner).toHaveLength(MAX_SERIES);
    expect(stats.by_owner.at(-1)!.key).toBe('other');
    // The biggest owners keep their names, biggest first.
    expect(stats.by_owner[0]!.key).toBe(`o${String(owners - 1).padStart(3, '0')}`);
    const drawn = stats.by_owner.reduce((n, s) => n + s.tokens.reduce((a, b) => a + b, 0), 0);
    expect(drawn).toBe((owners * (owners + 1)) / 2);
    expect(stats.by_owner.reduce((n, s) => n + s.requests.reduce((a, b) => a + b, 0), 0)).toBe(owners);
  });
});
