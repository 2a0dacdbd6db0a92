import { readFileSync } from 'node:fs';

// The command line alone, apart from `cli.ts`'s check-config: main.ts reads it before deciding what to load.

export const HELP = `Usage: switchyard [options]
       switchyard check-config [file]
       switchyard codex [codex args…]
       switchyard claude [claude args…]

Starts the Switchyard gateway: the OpenAI Responses API (and the Anthropic
Messages API) in front of a self-hosted model server.

Options:
  --config <file>   config file, JSON or YAML (overrides SWITCHYARD_CONFIG)
  --port <port>     port to listen on (overrides PORT)
  --plugin <name>   load a plugin at boot: an installed package or a path to a
                    file exporting tool modules (repeatable; adds to the
                    plugins setting and SWITCHYARD_PLUGINS)
  --version         print the version and exit
  --help            print this help and exit

Commands:
  check-config [file]  validate the settings (the file, else SWITCHYARD_CONFIG,
                       plus the environment, with the plugins' own sections) and
                       name each error; exit 0 when valid
  codex [args…]        run the installed Codex CLI against a running gateway
                       (SWITCHYARD_URL, default http://127.0.0.1:8080/v1;
                       SWITCHYARD_API_KEY), its models from the gateway's
                       /v1/models; the arguments go to Codex as given
  claude [args…]       the same for Claude Code (ANTHROPIC_BASE_URL, _MODEL,
                       _API_KEY and the model's window set unless already set)

Settings come from defaults, then the config file, then environment variables
(UPSTREAM_URL, PORT, STORAGE_DRIVER, DATABASE_URL, API_KEYS, ...), then these
flags. Every setting: docs/configuration.md (or docs/configuring.md for how they combine).
`;

export type CliCommand =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'check-config'; configFile?: string; plugins: string[] }
  | { kind: 'launch'; tool: 'codex' | 'claude'; args: string[] }
  | { kind: 'serve'; configFile?: string; port?: number; plugins: string[] };

export class UsageError extends Error {}

export function parseArgs(argv: readonly string[]): CliCommand {
  // Everything after a launcher's name is the launched tool's own command line.
  if (argv[0] === 'codex' || argv[0] === 'claude') return { kind: 'launch', tool: argv[0], args: argv.slice(1) };
  let configFile: string | undefined;
  let port: number | undefined;
  const plugins: string[] = [];
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        return { kind: 'help' };
      case '--version':
      case '-v':
        return { kind: 'version' };
      case '--config':
      case '-c':
        configFile = value();
        break;
      case '--port':
      case '-p': {
        const raw = value();
        port = Number(raw);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a port number (0-65535), got "${raw}"`);
        break;
      }
      case '--plugin':
        plugins.push(value());
        break;
      case 'check-config':
        check = true;
        break;
      default:
        if (check && !arg.startsWith('-') && configFile === undefined) configFile = arg;
        else throw new UsageError(`unknown argument "${arg}" (see switchyard --help)`);
    }
  }
  return check ? { kind: 'check-config', configFile, plugins } : { kind: 'serve', configFile, port, plugins };
}

/** The version in the project's package.json, found from here whether running from sources or from `dist/`. */
export function packageVersion(): string {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'switchyard-gateway') return pkg.version ?? '0.0.0';
    } catch {
      // not here; look one level up
    }
  }
  return '0.0.0';
}
