import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import type { ConfigSection, Env, SectionEnvSetting } from './config-section.js';
import { defaultListenHost } from './exposure.js';
import { DEFAULT_DATA_DIR, GatewayConfig } from './gateway-config.js';
import { knownKeysOnly, unknownKeysByClass, unknownKeysByShape } from './unknown-keys.js';
import { SECRET_SETTING, gotPart, violations } from './validation-messages.js';

/** A configuration the gateway refuses to boot with; the message names the setting. */
export class ConfigError extends Error {}

/**
 * Environment variables of the sections core itself reads. A module's
 * variables are declared by its section (`ConfigSection.env`).
 */
export const ENV_SETTINGS: SectionEnvSetting[] = [
  { env: 'UPSTREAM_URL', path: 'upstream.baseUrl', kind: 'string' },
  { env: 'UPSTREAM_DIALECT', path: 'upstream.dialect', kind: 'string' },
  { env: 'CHAT_TOOL_OUTPUT_MEDIA', path: 'upstream.chatToolOutputMedia', kind: 'string' },
  { env: 'UPSTREAM_API_KEY', path: 'upstream.apiKey', kind: 'string', secret: true },
  { env: 'UPSTREAM_MODEL', path: 'upstream.defaultModel', kind: 'string' },
  { env: 'UPSTREAM_FORWARD_HEADERS', path: 'upstream.forwardHeaders', kind: 'list' },
  { env: 'HOST', path: 'server.host', kind: 'string' },
  { env: 'PORT', path: 'server.port', kind: 'int' },
  { env: 'ALLOW_UNAUTHENTICATED_CODE', path: 'server.allowUnauthenticatedCode', kind: 'bool' },
  { env: 'WORKERS', path: 'server.workers', kind: 'int' },
  { env: 'SWITCHYARD_DATA_DIR', path: 'server.dataDir', kind: 'string' },
  { env: 'OWNER_ID_SECRET', path: 'server.ownerIdSecret', kind: 'string', secret: true },
  { env: 'BODY_LIMIT_BYTES', path: 'server.bodyLimitBytes', kind: 'int' },
  { env: 'SSE_KEEPALIVE_MS', path: 'server.keepAliveMs', kind: 'int' },
  { env: 'REASONING_EVENTS', path: 'server.reasoningEvents', kind: 'string' },
  { env: 'SSE_WRITES', path: 'server.sseWrites', kind: 'string' },
  { env: 'TIMEOUT_CONNECT_MS', path: 'timeouts.connectMs', kind: 'int' },
  { env: 'TIMEOUT_FIRST_BYTE_MS', path: 'timeouts.firstByteMs', kind: 'int' },
  { env: 'TIMEOUT_IDLE_MS', path: 'timeouts.idleMs', kind: 'int' },
  { env: 'TIMEOUT_TOTAL_MS', path: 'timeouts.totalMs', kind: 'int' },
  { env: 'MAX_ROUNDS', path: 'tools.maxRounds', kind: 'int' },
  { env: 'MAX_CONCURRENT_GATEWAY_CALLS', path: 'tools.maxConcurrentGatewayCalls', kind: 'int' },
  { env: 'TOOL_TIMEOUT_MS', path: 'tools.defaultTimeoutMs', kind: 'int' },
  { env: 'MAX_TOOLS_PER_REQUEST', path: 'tools.maxToolsPerRequest', kind: 'int' },
  { env: 'MAX_GATEWAY_CALLS_PER_REQUEST', path: 'tools.maxGatewayCallsPerRequest', kind: 'int' },
  { env: 'UNHANDLED_TOOL_TYPES', path: 'tools.unhandledTypes', kind: 'string' },
  { env: 'TOOL_DECLARATION_CACHE_ENTRIES', path: 'tools.declarationCacheEntries', kind: 'int' },
  { env: 'TOOL_DECLARATION_CACHE_BYTES', path: 'tools.declarationCacheBytes', kind: 'int' },
  { env: 'SHUTDOWN_GRACE_MS', path: 'server.shutdownGraceMs', kind: 'int' },
  { env: 'SWITCHYARD_PLUGINS', path: 'plugins', kind: 'list' },
];

function setPath(target: Record<string, any>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = node[key] ??= {};
  node[keys[keys.length - 1]] = value;
}

function merge(into: Record<string, any>, from: Record<string, any>): Record<string, any> {
  for (const [k, v] of Object.entries(from ?? {})) {
    if (v && typeof v === 'object' && !Array.isArray(v) && into[k] && typeof into[k] === 'object' && !Array.isArray(into[k])) merge(into[k], v);
    else into[k] = v;
  }
  return into;
}

/** One line per wrong value of core's sections, naming the variable that fills it. */
function describe(errors: ValidationError[]): string[] {
  return violations(errors).map(({ path, message, value }) => {
    const env = ENV_SETTINGS.find((s) => s.path === path)?.env;
    return `${path}${env ? ` (${env})` : ''}: ${message}${gotPart(value, SECRET_SETTING.test(path))}`;
  });
}

/**
 * `via` says how the file was named, so that an unreadable one is blamed on
 * what named it: the variable, or nothing when it was given on the command line.
 */
/** A config file's settings as written (JSON or YAML), before any validation. */
export function readConfigFile(file: string, via?: string): Record<string, unknown> {
  return readFile(file, via);
}

const requireHere = createRequire(import.meta.url);

/**
 * The YAML parser, loaded by the first YAML config file: most deployments
 * configure through the environment or JSON, and `yaml` is ~70 modules every
 * worker would otherwise hold (source and compiled code) for nothing.
 * Synchronous because the config is read before the app is built.
 */
function parseYaml(text: string): unknown {
  return (requireHere('yaml') as typeof import('yaml')).parse(text);
}

function readFile(file: string, via?: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read config file ${file}${via ? ` (${via})` : ''}: ${(err as Error).message}`);
  }
  const yaml = /\.ya?ml$/i.test(file);
  let parsed: unknown;
  try {
    parsed = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    const where = yaml ? yamlPosition(err) : jsonPosition(text, err);
    throw new ConfigError(`Config file ${file}${where} is not valid ${yaml ? 'YAML' : 'JSON'}: ${firstLine((err as Error).message)}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`Config file ${file} must hold an object of settings at the top level.`);
  }
  return parsed as Record<string, unknown>;
}

function firstLine(message: string): string {
  return message.split('\n')[0].trim();
}

/** `:line:column` of a JSON syntax error; V8 on Node 20 reports only an offset ("at position 42"). */
export function jsonPosition(text: string, err: unknown): string {
  const message = (err as Error)?.message ?? '';
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return `:${lineCol[1]}:${lineCol[2]}`;
  const position = /position (\d+)/.exec(message);
  // No offset means the text ended early: the error is at its end.
  const offset = position ? Number(position[1]) : text.length;
  const before = text.slice(0, offset).split('\n');
  return `:${before.length}:${before[before.length - 1].length + 1}`;
}

function yamlPosition(err: unknown): string {
  const pos = (err as { linePos?: Array<{ line: number; col: number }> })?.linePos?.[0];
  return pos ? `:${pos.line}:${pos.col}` : '';
}

export interface LoadConfigOptions {
  env?: Env;
  file?: string;
  overrides?: Record<string, unknown>;
  /**
   * The sections of the modules present (`configSectionsOf`). Keys of no
   * section and of none core reads are refused.
   */
  sections?: readonly ConfigSection[];
}

/** A variable whose text is not of its setting's kind; reported with the rest of the problems. */
class EnvValueError extends Error {}

function parseEnvValue(setting: SectionEnvSetting, path: string, value: string): unknown {
  const got = setting.secret ? '' : ` (got ${JSON.stringify(value)})`;
  if (setting.kind === 'int') {
    const parsed = value.trim() === '' ? NaN : Number(value);
    if (!Number.isInteger(parsed)) throw new EnvValueError(`${path} (${setting.env}): must be an integer${got}`);
    return parsed;
  }
  if (setting.kind === 'list')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (setting.kind === 'bool') {
    const word = value.trim().toLowerCase();
    if (!['1', '0', 'true', 'false', 'yes', 'no'].includes(word)) {
      throw new EnvValueError(`${path} (${setting.env}): must be true or false${got}`);
    }
    return ['1', 'true', 'yes'].includes(word);
  }
  return value;
}

/** Sets each variable's value; a value of the wrong kind is added to `problems` and the setting left as it was. */
function applyEnv(raw: Record<string, any>, env: Env, settings: readonly SectionEnvSetting[], prefix: string, problems: string[]): void {
  for (const setting of settings) {
    const value = env[setting.env];
    if (value === undefined || value === '') continue;
    const path = prefix ? `${prefix}.${setting.path}` : setting.path;
    try {
      setPath(raw, path, parseEnvValue(setting, path, value));
    } catch (err) {
      if (!(err instanceof EnvValueError)) throw err;
      problems.push(err.message);
    }
  }
}

/** The variables that carry credentials: core's and those the sections declare secret. */
export function secretEnvNames(sections: readonly ConfigSection[] = []): string[] {
  const names = new Set<string>();
  for (const s of [...ENV_SETTINGS, ...sections.flatMap((section) => section.env ?? [])]) if (s.secret) names.add(s.env);
  for (const section of sections) for (const name of section.secretEnv ?? []) names.add(name);
  return [...names];
}

/**
 * Takes the credentials out of `env` (the gateway passes `process.env`) and
 * returns them: once the config is loaded nothing reads them from the
 * environment again, and a child process (a sandbox, a tool server) started
 * with the default environment no longer inherits them.
 */
export function takeSecretEnv(env: Env, names: readonly string[]): Record<string, string> {
  const taken: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value === undefined) continue;
    taken[name] = value;
    delete env[name];
  }
  return taken;
}

/**
 * Builds the configuration once at boot: defaults, then the config file
 * (`SWITCHYARD_CONFIG`, JSON or YAML), then environment variables (core's and
 * each section's), then explicit overrides. Validation failures name every
 * bad setting.
 */
export function loadGatewayConfig(options: LoadConfigOptions = {}): GatewayConfig {
  const env = options.env ?? {};
  const sections = options.sections ?? [];
  const raw: Record<string, any> = {};
  const file = options.file ?? env.SWITCHYARD_CONFIG;
  if (file) merge(raw, readFile(file, options.file === undefined ? 'SWITCHYARD_CONFIG' : undefined));
  const envProblems: string[] = [];
  applyEnv(raw, env, ENV_SETTINGS, '', envProblems);
  for (const section of sections) {
    applyEnv(raw, env, section.env ?? [], section.key, envProblems);
    const computed = section.fromEnv?.(env);
    if (computed) merge(raw, { [section.key]: computed });
  }
  if (options.overrides) merge(raw, options.overrides);
  return validateGatewayConfig(withDataDirDefaults(raw, sections), { sections, problems: envProblems });
}

/** The sections' paths under `server.dataDir`, beneath whatever was set explicitly. */
function withDataDirDefaults(raw: Record<string, any>, sections: readonly ConfigSection[]): Record<string, any> {
  const dataDir = typeof raw.server?.dataDir === 'string' && raw.server.dataDir !== '' ? raw.server.dataDir : DEFAULT_DATA_DIR;
  const defaults: Record<string, any> = {};
  for (const section of sections) {
    const paths = section.fromDataDir?.(dataDir);
    if (paths) defaults[section.key] = paths;
  }
  return merge(defaults, raw);
}

/**
 * `upstream.baseUrl` may list several replicas, comma-separated (that is how
 * `UPSTREAM_URL` carries them); they become `baseUrls`, the first also `baseUrl`.
 * A `baseUrls` list alone supplies `baseUrl` the same way.
 */
function splitUpstreamUrls(raw: Record<string, any>): Record<string, any> {
  const upstream = raw.upstream;
  if (!upstream || typeof upstream !== 'object') return raw;
  if (typeof upstream.baseUrl === 'string' && upstream.baseUrl.includes(',')) {
    const urls = upstream.baseUrl
      .split(',')
      .map((u: string) => u.trim())
      .filter((u: string) => u.length > 0);
    upstream.baseUrls = urls;
    upstream.baseUrl = urls[0] ?? '';
  } else if (Array.isArray(upstream.baseUrls) && upstream.baseUrls.length > 0 && upstream.baseUrl === undefined) {
    upstream.baseUrl = upstream.baseUrls[0];
  }
  return raw;
}

function sectionEnvName(section: ConfigSection, line: string): string {
  // A section's messages name its settings by path; add the variable where one fills it.
  const match = /^([\w.[\]]+)(?=[: ])/.exec(line);
  const setting = match && section.env?.find((s) => `${section.key}.${s.path}` === match[1]);
  return setting && !line.includes(`(${setting.env})`) ? line.replace(match[1], `${match[1]} (${setting.env})`) : line;
}

/** A section's own validation, its error's lines as separate problems (without the common heading). */
function sectionProblems(section: ConfigSection, config: GatewayConfig): string[] {
  try {
    section.parse(config[section.key], config);
    return [];
  } catch (err) {
    const lines = (err instanceof Error ? err.message : String(err))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    // A multi-line message opens with a heading of its own ("Invalid configuration:").
    const details = lines.length > 1 && /:$/.test(lines[0]) ? lines.slice(1) : lines;
    return details.map((line) => sectionEnvName(section, line.replace(/^Invalid configuration:\s*/, '')));
  }
}

/** A copy of the config whose section `key` is `value`, for checking a section without its unknown keys. */
function withSection(config: GatewayConfig, key: string, value: unknown): GatewayConfig {
  return Object.assign(Object.create(Object.getPrototypeOf(config) as object) as GatewayConfig, config, { [key]: value });
}

/**
 * Validates raw settings (or passes a config the loader built): core's
 * sections with their classes, each module section with its own `parse`.
 * A key that neither core nor a section present knows is an error naming the
 * closest valid name.
 */
export function validateGatewayConfig(
  raw: Record<string, unknown> | GatewayConfig,
  options: { sections?: readonly ConfigSection[]; problems?: readonly string[] } = {},
): GatewayConfig {
  if (raw instanceof GatewayConfig) return raw;
  const sections = options.sections ?? [];
  const plain = splitUpstreamUrls(merge({}, raw as Record<string, any>));
  const config = plainToInstance(GatewayConfig, plain, { exposeDefaultValues: true });
  const unknown = unknownKeysByClass(
    plain,
    config,
    '',
    sections.map((s) => s.key),
  );
  const problems = [...(options.problems ?? []), ...unknown, ...describe(validateSync(config, { forbidUnknownValues: false }))];
  // Every problem in one pass: a section's unknown keys and its wrong values together, and
  // each section's values even when core's are wrong. A section's check may mention a key
  // the shape already refused ("is not a setting"): that line is said once.
  for (const section of sections) {
    const typos = unknownKeysByShape(plain[section.key], section.keys, section.key);
    problems.push(...typos);
    const checked = typos.length === 0 ? config : withSection(config, section.key, knownKeysOnly(plain[section.key], section.keys));
    problems.push(...sectionProblems(section, checked));
  }
  const unique = [...new Set(problems)];
  if (unique.length === 1) throw new ConfigError(`Invalid configuration: ${unique[0]}`);
  if (unique.length > 1) throw new ConfigError(`Invalid configuration:\n  ${unique.join('\n  ')}`);
  // Resolved once here, so that every reader of `server.host` (listen, start-up line, check-config) sees one address.
  config.server.host ??= defaultListenHost(config);
  return config;
}
