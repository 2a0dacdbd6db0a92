import type { ConfigSection, KeyShape, SectionEnvSetting } from './config-section.js';
import { ENV_SETTINGS, validateGatewayConfig } from './config.loader.js';
import { GatewayConfig } from './gateway-config.js';
import { declaredProperties } from './unknown-keys.js';

/**
 * The configuration reference, generated from what the gateway itself
 * validates: each setting's path, the variable that fills it, its default and
 * what it takes, the last read from the validation's own message for a value
 * no setting accepts. Nothing in it is written by hand, so it cannot drift
 * from the code; `npm run docs:config` writes it to docs/configuration.md and
 * a test fails when the file and the code disagree.
 */

interface Row {
  path: string;
  env?: SectionEnvSetting;
  defaultValue: unknown;
  takes: string;
}

/** A value of the wrong kind for every setting: its refusal says what the setting takes. */
const PROBE = { switchyardReferenceProbe: true };

const isClassInstance = (value: unknown): value is object =>
  !!value && typeof value === 'object' && !Array.isArray(value) && value.constructor !== Object && declaredProperties(value.constructor).length > 0;

const valueAt = (root: unknown, path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), root);

function nested(path: string[], value: unknown): Record<string, unknown> {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

/** What the validation says a setting takes, without the value it got; empty where it accepts an object. */
function takesFrom(message: string, path: string): string {
  const line = message
    .split('\n')
    .map((l) => l.trim().replace(/^Invalid configuration:\s*/, ''))
    .find((l) => l.startsWith(`${path}:`) || l.startsWith(`${path} (`));
  if (!line) return '';
  return line
    .slice(line.indexOf(': ') + 2)
    .replace(/\s*\(got [^)]*\)$/, '')
    .trim();
}

function refusal(check: () => unknown): string {
  try {
    check();
    return '';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Core's settings: the nested classes of \`GatewayConfig\`, walked from their declared properties. */
function coreRows(): Row[] {
  const defaults = new GatewayConfig();
  const rows: Row[] = [];
  const walk = (instance: object, path: string[]): void => {
    for (const key of declaredProperties(instance.constructor)) {
      const value = (instance as Record<string, unknown>)[key];
      const at = [...path, key];
      if (isClassInstance(value)) {
        walk(value, at);
        continue;
      }
      const dotted = at.join('.');
      rows.push({
        path: dotted,
        env: ENV_SETTINGS.find((s) => s.path === dotted),
        defaultValue: value,
        takes: takesFrom(
          refusal(() => validateGatewayConfig(nested(at, PROBE))),
          dotted,
        ),
      });
    }
  };
  walk(defaults, []);
  return rows;
}

function sectionRows(section: ConfigSection): Row[] {
  const defaults = (() => {
    try {
      return section.parse(undefined, new GatewayConfig()) as unknown;
    } catch {
      return undefined;
    }
  })();
  const underDataDir = section.fromDataDir?.('<dataDir>');
  const rows: Row[] = [];
  const walk = (shape: KeyShape, path: string[]): void => {
    if (shape === true || Array.isArray(shape) || Object.keys(shape).includes('*')) {
      const dotted = [section.key, ...path].join('.');
      rows.push({
        path: dotted,
        env: section.env?.find((e) => `${section.key}.${e.path}` === dotted),
        defaultValue: valueAt(underDataDir, path) ?? valueAt(defaults, path),
        takes: takesFrom(
          refusal(() => section.parse(nested(path, PROBE), new GatewayConfig())),
          dotted,
        ),
      });
      return;
    }
    for (const [key, inner] of Object.entries(shape as Record<string, KeyShape>)) walk(inner, [...path, key]);
  };
  walk(section.keys, []);
  return rows;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value === '' ? '`""`' : `\`${value}\``;
  return `\`${JSON.stringify(value)}\``;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(rows: Row[]): string[] {
  return [
    '| setting | variable | default | takes |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| \`${r.path}\` | ${r.env ? `\`${r.env.env}\`${r.env.secret ? ' (secret)' : ''}` : ''} | ${cell(show(r.defaultValue))} | ${cell(r.takes)} |`),
  ];
}

/** The reference as Markdown: core's sections, then each module's, in key order. */
export function renderConfigReference(sections: readonly ConfigSection[]): string {
  const core = coreRows();
  const groups = new Map<string, Row[]>();
  for (const row of core) {
    const top = row.path.includes('.') ? row.path.slice(0, row.path.indexOf('.')) : row.path;
    groups.set(top, [...(groups.get(top) ?? []), row]);
  }
  const lines = [
    '# Configuration reference',
    '',
    'Generated by `npm run docs:config` from the settings the gateway validates; do not edit by hand (a test',
    'fails when this file and the code disagree). Settings come from defaults, then the config file',
    '(`--config FILE` or `SWITCHYARD_CONFIG`, JSON or YAML), then the variables named here, then command-line',
    'flags. `switchyard check-config` names every problem at once. Variables marked secret are taken out of',
    'the environment once read. `<dataDir>` is `server.dataDir` (`SWITCHYARD_DATA_DIR`). "takes" is the',
    "validation's own word for what a setting accepts.",
    '',
  ];
  for (const [top, rows] of groups) lines.push(`## \`${top}\``, '', ...table(rows), '');
  for (const section of [...sections].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    lines.push(`## \`${section.key}\``, '', ...table(sectionRows(section)), '');
  }
  return lines.join('\n');
}
