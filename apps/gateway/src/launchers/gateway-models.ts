import { spawn } from 'node:child_process';

// What the launchers share: where the gateway is, what it serves, and running the tool with the user's terminal.

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8080/v1';
/** Where the launchers read the gateway's URL and key from. */
export const GATEWAY_URL_ENV = 'SWITCHYARD_URL';
export const GATEWAY_KEY_ENV = 'SWITCHYARD_API_KEY';

/** A `/v1/models` entry, with the metadata the gateway adds to every entry. */
export interface GatewayModel {
  id: string;
  context_window?: number | null;
  max_output_tokens?: number | null;
  input_modalities?: string[] | null;
  /** `true`, or the efforts the model takes. */
  reasoning?: boolean | string[] | null;
}

export class LauncherError extends Error {}

export interface GatewayTarget {
  url: string;
  key?: string;
}

export function gatewayTarget(env: NodeJS.ProcessEnv): GatewayTarget {
  const url = (env[GATEWAY_URL_ENV]?.trim() || DEFAULT_GATEWAY_URL).replace(/\/+$/, '');
  const key = env[GATEWAY_KEY_ENV]?.trim() || undefined;
  return { url, key };
}

/** The running gateway's catalog; a gateway that does not answer is named with its URL. */
export async function fetchGatewayModels(target: GatewayTarget): Promise<GatewayModel[]> {
  let res: Response;
  try {
    res = await fetch(`${target.url}/models`, { headers: target.key ? { authorization: `Bearer ${target.key}` } : {}, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new LauncherError(`no gateway answered at ${target.url} (set ${GATEWAY_URL_ENV}): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) throw new LauncherError(`${target.url}/models answered HTTP ${res.status}${res.status === 401 ? ` (set ${GATEWAY_KEY_ENV})` : ''}`);
  const body = (await res.json()) as { data?: GatewayModel[] };
  const models = (body.data ?? []).filter((m) => typeof m?.id === 'string');
  if (models.length === 0) throw new LauncherError(`${target.url}/models lists no models`);
  return models;
}

/** Runs a command with the user's stdio; resolves to its exit code (128+n for a signal). */
export function runInheriting(command: string, args: readonly string[], env: NodeJS.ProcessEnv, name: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.on('error', (err) => reject(new LauncherError(`could not start ${name} (${command}): ${err.message}`)));
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? signalNumber(signal) : 0)));
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return numbers[signal] ?? 1;
}
