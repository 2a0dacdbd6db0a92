// The import-boundary rule: every import that leaves its unit (a library under
// libs/, a tool library under libs/tools/, src/, an app) must
//  - use the `#name/...` alias rather than a relative path, and
//  - point in an allowed direction, as declared by the `layers` option
//    (unit -> the units it may import; `tools/*` matches every tool library,
//    a path such as `src/tool-contract.ts` one file of a unit).
// Units are the ones scripts/source-units.mjs defines, so the rule and the
// alias codemod agree. Spec files may also reach test helpers and any library:
// the layers guard what ships, not how it is tested.
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aliasDirectories, aliasSpecifier, aliasTarget, unitOf } from '../scripts/source-units.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toPosix = (path) => path.split(sep).join('/');
// The package's own public names, mapped to src/ by tsconfig `paths` and the Jest config.
const SELF_NAMES = new Set(['switchyard-gateway', 'switchyard-gateway/microservice']);
const isSpec = (file) => /\.(spec|e2e-spec)\.ts$/.test(file);

let aliasDirs;
const aliases = () => (aliasDirs ??= aliasDirectories(root));

/** Whether a layers entry (`core`, `tools/*`, `*`, or one file such as `src/tool-contract.ts`) covers a target. */
function covers(pattern, unit, path) {
  if (pattern.endsWith('.ts')) return path.replace(/\.js$/, '.ts') === pattern;
  return matches(pattern, unit);
}

function matches(pattern, unit) {
  if (pattern === '*') return true;
  return pattern.endsWith('/*') ? unit.startsWith(pattern.slice(0, -1)) : pattern === unit;
}

/** The repository-relative target of a specifier and whether it was relative, or null for a package import. */
function targetOf(file, specifier) {
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    return { path: toPosix(relative(root, resolve(root, dirname(file), specifier))), relative: true };
  }
  if (SELF_NAMES.has(specifier)) return { path: 'src/index.ts', relative: false };
  const path = aliasTarget(specifier, aliases());
  return path ? { path, relative: false } : null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const dependencyDirection = {
  meta: {
    type: 'problem',
    docs: { description: 'Cross-library imports use the #name/ aliases and follow the declared dependency direction' },
    schema: [
      {
        type: 'object',
        properties: {
          layers: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          specsMayImport: { type: 'array', items: { type: 'string' } },
        },
        required: ['layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      useAlias: "'{{specifier}}' leaves {{from}}: import it as '{{alias}}' (node scripts/apply-aliases.mjs rewrites these).",
      forbidden: '{{from}} must not depend on {{to}} (it may import {{allowed}}); see the layers in eslint.config.mjs.',
      undeclared: '{{from}} has no entry in the layers of eslint.config.mjs: declare which units it may import.',
    },
  },
  create(context) {
    const { layers, specsMayImport = [] } = context.options[0];
    const file = toPosix(relative(root, context.filename));
    const from = unitOf(file);
    if (!from || file.startsWith('..')) return {};
    const declared = Object.keys(layers).find((pattern) => matches(pattern, from));
    const allowed = declared ? layers[declared] : null;
    const spec = isSpec(file);

    function check(node) {
      const specifier = node?.type === 'Literal' && typeof node.value === 'string' ? node.value : null;
      if (!specifier) return;
      const target = targetOf(file, specifier);
      if (!target) return;
      const to = unitOf(target.path);
      if (!to || to === from) return;
      const alias = target.relative ? aliasSpecifier(target.path) : null;
      if (alias) context.report({ node, messageId: 'useAlias', data: { specifier, from, alias } });
      if (!allowed) return;
      const permitted = [...allowed, ...(spec ? specsMayImport : [])];
      if (permitted.some((pattern) => covers(pattern, to, target.path))) return;
      context.report({ node, messageId: 'forbidden', data: { from, to, allowed: allowed.length ? allowed.join(', ') : 'nothing else' } });
    }

    return {
      Program(node) {
        if (!declared) context.report({ node, messageId: 'undeclared', data: { from } });
      },
      ImportDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.literal ?? node.argument),
    };
  },
};

export default { rules: { 'dependency-direction': dependencyDirection } };
