import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { GatewayConfig } from '#config/gateway-config.js';
import { redactUrl } from '#observability/startup/startup-summary.js';

/** How long the start-up look at the upstream waits: a server that answers at all answers well within it. */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * Resolves once the server answers \`GET url\` with any status, or rejects
 * with why it could not be reached. node:http rather than fetch: fetch
 * refuses some ports outright (9, 6000, …) that the gateway's own client
 * would use without complaint.
 */
function look(url: URL, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      resolve();
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end();
  });
}

/**
 * One look at each configured upstream as the gateway starts (\`GET /models\`,
 * which vLLM, SGLang, Ollama and llama.cpp all serve): one that cannot be
 * reached is a warning naming UPSTREAM_URL now, rather than a 502 at the
 * first request. Any HTTP answer counts as reached; the start never waits on
 * it and is never refused by it (the upstream may come up later).
 */
export async function unreachableUpstreams(config: GatewayConfig): Promise<string[]> {
  const urls = config.upstream.baseUrls?.length ? config.upstream.baseUrls : [config.upstream.baseUrl];
  const headers: Record<string, string> = config.upstream.apiKey ? { authorization: `Bearer ${config.upstream.apiKey}` } : {};
  const looks = urls.map(async (url) => {
    try {
      await look(new URL(`${url.replace(/\/$/, '')}/models`), headers);
      return undefined;
    } catch (err) {
      const reason = (err as { code?: string }).code ?? (err instanceof Error ? err.message : String(err));
      return `upstream.baseUrl (UPSTREAM_URL) ${redactUrl(url)} is unreachable (${reason}): requests will fail until it answers`;
    }
  });
  return (await Promise.all(looks)).filter((w): w is string => w !== undefined);
}
