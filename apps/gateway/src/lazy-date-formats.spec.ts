import { lazyDateTimeFormat, withLazyDateFormats } from './lazy-date-formats.js';

/** Installs a counting subclass as `Intl.DateTimeFormat` for one test: how many real formatters were built. */
function countingDateTimeFormat(): { built: () => number; restore: () => void } {
  const Original = Intl.DateTimeFormat;
  let count = 0;
  class Counting extends Original {
    constructor(locales?: string | string[], options?: Intl.DateTimeFormatOptions) {
      super(locales, options);
      count++;
    }
  }
  Intl.DateTimeFormat = Counting as unknown as typeof Intl.DateTimeFormat;
  return { built: () => count, restore: () => void (Intl.DateTimeFormat = Original) };
}

const OPTIONS: Intl.DateTimeFormatOptions = { year: 'numeric', month: '2-digit', day: '2-digit', hour: 'numeric', minute: 'numeric', second: 'numeric', timeZone: 'UTC' };
const WHEN = Date.UTC(2026, 11, 7, 10, 4, 5);

describe('formatters built during withLazyDateFormats are built for real at their first use', () => {
  it('builds none while loading, one at the first call, and formats as the real one', async () => {
    const counting = countingDateTimeFormat();
    try {
      const made = await withLazyDateFormats(async () => new Intl.DateTimeFormat('en-GB', OPTIONS));
      expect(counting.built()).toBe(0);
      const real = new Intl.DateTimeFormat('en-GB', OPTIONS);
      expect(made.format(WHEN)).toBe(real.format(WHEN));
      expect(made.formatToParts(WHEN)).toEqual(real.formatToParts(WHEN));
      expect(made.resolvedOptions()).toEqual(real.resolvedOptions());
      expect(made.formatRange(WHEN, WHEN + 86_400_000)).toBe(real.formatRange(WHEN, WHEN + 86_400_000));
      // The real one above, and one behind `made`, built once for its four calls.
      expect(counting.built()).toBe(2);
    } finally {
      counting.restore();
    }
  });

  it('puts the real constructor back, also when the load fails', async () => {
    const Real = Intl.DateTimeFormat;
    await withLazyDateFormats(async () => expect(Intl.DateTimeFormat).not.toBe(Real));
    expect(Intl.DateTimeFormat).toBe(Real);
    await expect(withLazyDateFormats(() => Promise.reject(new Error('no such module')))).rejects.toThrow('no such module');
    expect(Intl.DateTimeFormat).toBe(Real);
    expect(new Intl.DateTimeFormat('en', OPTIONS)).toBeInstanceOf(Real);
  });

  it('keeps the static supportedLocalesOf of the real constructor', () => {
    expect(lazyDateTimeFormat(Intl.DateTimeFormat).supportedLocalesOf(['en-GB', 'de-AT'])).toEqual(Intl.DateTimeFormat.supportedLocalesOf(['en-GB', 'de-AT']));
  });

  it("@nestjs/common imported through it builds no formatter, and its console logger still prints Nest's timestamp", async () => {
    const counting = countingDateTimeFormat();
    let nest: typeof import('@nestjs/common');
    try {
      nest = await withLazyDateFormats(() => import('@nestjs/common'));
      // Nest's two logger modules build theirs on import; this test file is the first to import Nest.
      expect(counting.built()).toBe(0);
    } finally {
      counting.restore();
    }
    const written: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
    try {
      const before = Date.now();
      new nest.ConsoleLogger('Probe', { timestamp: true, colors: false }).log('hello');
      const after = Date.now();
      const nestFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', day: '2-digit', month: '2-digit' });
      const line = written.join('');
      expect(line).toContain('[Probe] hello');
      expect([nestFormat.format(before), nestFormat.format(after)].some((stamp) => line.includes(stamp))).toBe(true);
    } finally {
      process.stdout.write = write;
    }
  });
});
