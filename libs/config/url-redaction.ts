/**
 * A URL as it may be shown: in error bodies, events, probes and logs. The
 * password (or a user name standing alone, a token) and every query value are replaced by `***` (an
 * upstream or MCP server is often given as `http://user:pass@host` or
 * `...?token=...`); the scheme, host, port, path and query keys stay, so the
 * text still says which server it was. Text that is not a URL is returned
 * unchanged.
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  // Nothing to hide: the text stays exactly as configured or sent.
  if (!url.username && !url.password && !url.search && !url.hash) return value;
  // `user:pass@` keeps the user name (it tells which account); a lone
  // `token@` is itself the credential.
  if (url.password) url.password = '***';
  else if (url.username) url.username = '***';
  if (url.search) {
    const keys = [...url.searchParams.keys()];
    url.search = keys.map((k) => `${encodeURIComponent(k)}=***`).join('&');
  }
  url.hash = '';
  // `URL` percent-encodes the `*` of the placeholders in the query; show them plainly.
  return url.toString().replace(/%2A%2A%2A/gi, '***');
}

/** The secret parts of a URL (user name, password, query values), for scrubbing them out of free text. */
export function urlSecrets(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [];
  }
  const secrets = [url.password, decodeURIComponent(url.password)];
  if (!url.password) secrets.push(url.username, decodeURIComponent(url.username));
  for (const v of url.searchParams.values()) secrets.push(v, encodeURIComponent(v));
  if (url.search.length > 1) secrets.push(url.search.slice(1));
  return [...new Set(secrets.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length);
}
