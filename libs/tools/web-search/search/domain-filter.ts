/**
 * `filters.allowed_domains` and `filters.blocked_domains`: pushed to the
 * provider where its API can filter, and always enforced again on the
 * results, because `site:` and `-site:` operators are hints to most engines
 * (SearXNG forwards them to engines that may ignore them) rather than
 * guarantees.
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

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

const underAny = (host: string, domains: readonly string[]): boolean => domains.some((d) => host === d || host.endsWith(`.${d}`));

/** True when `url`'s host is one of `domains` or a subdomain of one. */
export function isAllowed(url: string, domains: readonly string[] | undefined): boolean {
  if (!domains || domains.length === 0) return true;
  const host = hostOf(url);
  return host !== undefined && underAny(host, domains);
}

/** True when `url`'s host is one of `domains` or a subdomain of one; a URL without a readable host counts as blocked (it cannot be shown not to be). */
export function isBlocked(url: string, domains: readonly string[] | undefined): boolean {
  if (!domains || domains.length === 0) return false;
  const host = hostOf(url);
  return host === undefined || underAny(host, domains);
}

/** A result may be shown: on an allowed domain (when there is a list) and on no blocked one. */
export function passesDomainFilters(url: string, filters: { allowedDomains?: readonly string[]; blockedDomains?: readonly string[] }): boolean {
  return isAllowed(url, filters.allowedDomains) && !isBlocked(url, filters.blockedDomains);
}

/**
 * The query with `site:` terms for the allowed domains and `-site:` terms for
 * the blocked ones, for engines that understand them (Google via Serper,
 * Brave, most SearXNG engines). Adjacent `site:a OR site:b` binds tighter than
 * the implicit AND, so no parentheses are needed. Each group is left out when
 * it has too many terms or would not fit `maxLength`; the results are
 * filtered either way.
 */
export function withSiteOperators(query: string, domains: readonly string[] | undefined, maxLength = 400, blocked?: readonly string[]): string {
  const groups = [domains?.map((d) => `site:${d}`).join(' OR '), blocked?.map((d) => `-site:${d}`).join(' ')];
  const counts = [domains?.length ?? 0, blocked?.length ?? 0];
  let q = query;
  groups.forEach((terms, i) => {
    if (!terms || counts[i] > MAX_SITE_TERMS) return;
    const restricted = `${q} ${terms}`;
    if (restricted.length <= maxLength) q = restricted;
  });
  return q;
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
