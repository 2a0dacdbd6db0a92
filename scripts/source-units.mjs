// The repository's units (each library under libs/, each tool library under
// libs/tools/, src/, each app, test/, bench/) and the `#name/...` aliases that
// cross-unit imports use. Shared by the alias codemod (scripts/apply-aliases.mjs)
// and the import-boundary lint rule (eslint/boundaries.mjs), so both agree on
// what "another library" means.
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * The package.json `imports` condition that points an alias at the TypeScript
 * sources. tsc (customConditions), Jest (customExportConditions) and the test
 * loader (test/support/process/ts-loader.hooks.mjs) set it; plain Node, and so
 * the built dist/ and the installed package, take the `default` target.
 */
export const SOURCE_CONDITION = 'switchyard-source';

/** Top-level folders whose files take part (the tsconfig's `include`). */
export const SOURCE_ROOTS = ['apps', 'libs', 'src', 'test', 'bench'];

/**
 * The unit a repository-relative posix path belongs to, or null outside the
 * source roots. `libs/tools/<x>/...` is its own library; files directly in
 * libs/tools/ (the built-in module list) form the `tools` unit.
 */
export function unitOf(path) {
  const parts = path.split('/');
  const [top, second] = parts;
  if (!SOURCE_ROOTS.includes(top)) return null;
  if (top === 'libs') {
    if (parts.length < 3) return null;
    if (second === 'tools') return parts.length > 3 ? `tools/${parts[2]}` : 'tools';
    return second;
  }
  if (top === 'apps') return parts.length > 2 ? `apps/${second}` : null;
  return top;
}

/** The alias prefix that reaches a path (`libs/core/x.ts` -> `#core/`), or null if it has none. */
export function aliasRoot(path) {
  const parts = path.split('/');
  if (parts[0] === 'src' && parts.length > 1) return { alias: '#src/', dir: 'src/' };
  if (parts[0] === 'libs' && parts.length > 2) return { alias: `#${parts[1]}/`, dir: `libs/${parts[1]}/` };
  return null;
}

/**
 * The alias specifier for an import of `target` (repository-relative, with the
 * `.js` suffix the sources write), or null when the target has no alias.
 */
export function aliasSpecifier(target) {
  const root = aliasRoot(target);
  if (!root || !target.endsWith('.js')) return null;
  return root.alias + target.slice(root.dir.length);
}

/** The repository-relative path (`.js` suffix kept) an alias specifier names, or null if it is no alias of ours. */
export function aliasTarget(specifier, aliasDirs) {
  const match = /^#([^/]+)\/(.+)$/.exec(specifier);
  if (!match) return null;
  const dir = aliasDirs.get(`#${match[1]}/`);
  return dir ? dir + match[2] : null;
}

/** Every alias the repository defines: one per library folder under libs/, and src/. */
export function aliasDirectories(root) {
  const dirs = new Map([['#src/', 'src/']]);
  for (const entry of readdirSync(join(root, 'libs'), { withFileTypes: true })) {
    if (entry.isDirectory()) dirs.set(`#${entry.name}/`, `libs/${entry.name}/`);
  }
  return dirs;
}

/** The package.json `imports` entries for the aliases: sources under the source condition, dist/ otherwise. */
export function importsField(root) {
  const entries = [...aliasDirectories(root)].sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(entries.map(([alias, dir]) => [`${alias}*.js`, { [SOURCE_CONDITION]: `./${dir}*.ts`, default: `./${posix.join('dist', dir)}*.js` }]));
}
