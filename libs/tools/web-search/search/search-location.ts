/**
 * `user_location` → the locale parameters search APIs take. Country and
 * language come from CLDR through `Intl`, so there is no table to keep up to
 * date: `und-DE` maximizes to `de-Latn-DE`, `und-CH` to `de-Latn-CH`.
 */

export function languageForCountry(country: string): string | undefined {
  try {
    const language = new Intl.Locale(`und-${country}`).maximize().language;
    return language && language !== 'und' ? language : undefined;
  } catch {
    return undefined;
  }
}

let regionNames: Intl.DisplayNames | undefined;

/** English name of an ISO 3166-1 alpha-2 code (`US` → `United States`), as name-based APIs expect. */
export function countryName(country: string): string | undefined {
  try {
    regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    return regionNames.of(country) ?? undefined;
  } catch {
    return undefined;
  }
}
