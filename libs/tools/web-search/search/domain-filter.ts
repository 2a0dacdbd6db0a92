/**
 * `filters.allowed_domains`: pushed to the provider where its API can filter,
 * and always enforced again on the results, because `site:` operators are
 * hints to most engines (SearXNG forwards them to engines that may ignore
 * them) rather than guarantees.
 */

const HOST = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** More `site:` terms than this make queries engines truncate or reject; such lists are filtered locally only. */
const MAX_SITE_TERMS = 10;

/**
 * Reduces what clients write (`https://Example.com/docs/`, `example.com`) to
 * a host name; `undefined` when it is not one.
 */
export function normalizeDomain(input: string): string | undefined {
  let host = input.trim().toLowerCase();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  host = host.split(/[/?#]/, 1)[0];
  host = host.replace(/:\d+$/, '').replace(/\.$/, '');
  return HOST.test(host) ? host : undefined;
}

/** True when `url`'s host is one of `domains` or a subdomain of one. */
export function isAllowed(url: string, domains: readonly string[] | undefined): boolean {
  if (!domains || domains.length === 0) return true;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return false;
  }
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

/**
 * The query with `site:` terms for engines that understand them (Google via
 * Serper, Brave, most SearXNG engines). Adjacent `site:a OR site:b` binds
 * tighter than the implicit AND, so no parentheses are needed. Returns the
 * query unchanged when the terms would not fit `maxLength`.
 */
export function withSiteOperators(query: string, domains: readonly string[] | undefined, maxLength = 400): string {
  if (!domains || domains.length === 0 || domains.length > MAX_SITE_TERMS) return query;
  const restricted = `${query} ${domains.map((d) => `site:${d}`).join(' OR ')}`;
  return restricted.length <= maxLength ? restricted : query;
}

/** Two results are the same page when they differ only in scheme, `www.`, fragment or a trailing slash. */
export function dedupeKey(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname.toLowerCase().replace(/^www\./, '');
    const path = u.pathname.replace(/\/+$/, '');
    return `${host}${path}${u.search}`;
  } catch {
    return url;
  }
}
