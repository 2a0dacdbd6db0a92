/**
 * Runs `load` (an `import()`) while `Intl.DateTimeFormat` hands out formatters
 * that build the real one at their first use, then puts the real constructor
 * back, even when `load` fails.
 *
 * Why: `@nestjs/common`'s two logger modules each build a formatter for the
 * default locale when imported, for the timestamps of Nest's console logger.
 * Building one reads the locale's calendar and time-zone data out of ICU,
 * which touches about 8 MiB of the `node` binary's pages; they then count in
 * every worker's RSS for good (issue 53). The gateway logs through its own
 * JSON lines (`NestLogBridge`), so Nest never formats a timestamp unless an
 * embedder uses its console logger; then the formatter is built at that first
 * line and behaves as Nest's own. Only modules evaluated during `load` get
 * the deferred kind: import Nest through this before anything else imports it.
 */
export async function withLazyDateFormats<T>(load: () => Promise<T>): Promise<T> {
  const Real = Intl.DateTimeFormat;
  Intl.DateTimeFormat = lazyDateTimeFormat(Real);
  try {
    return await load();
  } finally {
    Intl.DateTimeFormat = Real;
  }
}

type DateTimeFormatConstructor = typeof Intl.DateTimeFormat;

/** A stand-in constructor whose formatters delegate every method to a real one built on first call. */
export function lazyDateTimeFormat(Real: DateTimeFormatConstructor): DateTimeFormatConstructor {
  function LazyDateTimeFormat(locales?: string | string[], options?: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
    let real: Intl.DateTimeFormat | undefined;
    const built = () => (real ??= new Real(locales, options));
    return {
      format: (date?: Date | number) => built().format(date),
      formatToParts: (date?: Date | number) => built().formatToParts(date),
      formatRange: (start: Date | number, end: Date | number) => built().formatRange(start, end),
      formatRangeToParts: (start: Date | number, end: Date | number) => built().formatRangeToParts(start, end),
      resolvedOptions: () => built().resolvedOptions(),
    } as Intl.DateTimeFormat;
  }
  LazyDateTimeFormat.supportedLocalesOf = Real.supportedLocalesOf.bind(Real);
  LazyDateTimeFormat.prototype = Real.prototype;
  return LazyDateTimeFormat as unknown as DateTimeFormatConstructor;
}
