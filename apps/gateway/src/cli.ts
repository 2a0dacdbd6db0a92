import { ConfigError } from '#config/config.loader.js';
import { loadGatewayConfig } from '#src/gateway-config.loader.js';

export * from './cli-args.js';

/** `check-config`: every problem, one per line; the exit code says whether there were any. */
export function checkConfig(env: Record<string, string | undefined>, configFile?: string): { ok: boolean; lines: string[] } {
  try {
    // Every module section is validated by the loader, so this finds what starting the gateway would.
    loadGatewayConfig({ env, file: configFile });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const lines = err.message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && l !== 'Invalid configuration:');
    return { ok: false, lines: lines.map((l) => `error: ${l}`) };
  }
  const source = configFile ?? env.SWITCHYARD_CONFIG;
  return { ok: true, lines: [`ok: ${source ? `${source} and the environment` : 'the environment'} give a valid configuration`] };
}
