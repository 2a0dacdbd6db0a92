import type { ConfigSection, Env } from './config-section.js';
import { ENV_SETTINGS } from './config.loader.js';
import { editDistance } from './unknown-keys.js';

/**
 * Variables the gateway's programs read outside the config sections: the
 * config file's path, the simulator's and the demo's own, a debugging switch.
 * A variable named here is never reported as a look-alike.
 */
const PROGRAM_VARIABLES = ['SWITCHYARD_CONFIG', 'SWITCHYARD_JUPYTER_DEBUG', 'SIM_PORT', 'SIM_MODEL', 'SIM_FAULT', 'DEMO_MODEL'];

/** Prefixes only Switchyard's own settings use: any unknown variable under them is a mistake. */
const OWN_PREFIXES = ['SWITCHYARD_', 'UPSTREAM_'];

/**
 * The variables a section's `fromEnv` reads, found by asking it: it is
 * called on an environment that records the names it looks up.
 */
function variablesReadBy(section: ConfigSection): string[] {
  if (!section.fromEnv) return [];
  const read = new Set<string>();
  const probe = new Proxy({} as Env, {
    get: (_, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  section.fromEnv(probe);
  return [...read];
}

/** Every variable name the gateway reads, core's and the sections'. */
export function knownVariables(sections: readonly ConfigSection[]): Set<string> {
  return new Set([
    ...ENV_SETTINGS.map((s) => s.env),
    ...sections.flatMap((s) => [...(s.env ?? []).map((e) => e.env), ...(s.secretEnv ?? []), ...variablesReadBy(s)]),
    ...PROGRAM_VARIABLES,
  ]);
}

/**
 * Variables that look like a setting but are none: a name one or two edits
 * from a real one (\`UPSTREM_URL\`), or an unknown name under a prefix only
 * Switchyard uses (\`UPSTREAM_TIMEOUT\`). Each is a warning line naming the
 * variable it most likely meant; the environment's other variables are
 * nobody's business here.
 */
export function settingLikeVariables(env: Env, sections: readonly ConfigSection[]): string[] {
  const known = knownVariables(sections);
  const names = [...known];
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || !/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    // Short names are one edit from many ordinary variables (HOME, HOST): they must match closer.
    const allowed = name.length <= 6 ? 1 : 2;
    const near = names
      .filter((candidate) => Math.abs(candidate.length - name.length) <= allowed)
      .map((candidate) => ({ candidate, distance: editDistance(name, candidate) }))
      .filter((c) => c.distance <= allowed)
      .sort((a, b) => a.distance - b.distance || (a.candidate < b.candidate ? -1 : 1))[0];
    const ours = OWN_PREFIXES.some((prefix) => name.startsWith(prefix));
    if (!near && !ours) continue;
    warnings.push(`${name} is set but is not a setting${near ? ` (did you mean ${near.candidate}?)` : ''}; it is ignored`);
  }
  return warnings;
}
