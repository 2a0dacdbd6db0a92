// ESLint: the dependency direction between libraries (eslint/boundaries.mjs),
// domain errors without HTTP statuses below the edge (eslint/domain-errors.mjs)
// plus the recommended JavaScript and TypeScript rules. Formatting is
// Prettier's (npm run format:check), so no stylistic rule is enabled here.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import boundaries from './eslint/boundaries.mjs';
import domainErrors from './eslint/domain-errors.mjs';

/**
 * Which units each unit may import (besides itself). Read bottom-up: config is
 * the base, core the framework on it, the edge libraries (http, upstream,
 * storage, limits) implement core's ports, the surfaces (responses, messages,
 * state, observability) sit on those, tool libraries see only core and config
 * (or the public tool contract in src/), and src/, the apps, test/ and bench/
 * are on top.
 */
const layers = {
  config: [],
  // The tool SDK: the whole contract a tool module is written against, and nothing of the gateway above it.
  'tool-sdk': ['config'],
  core: ['config', 'tool-sdk'],
  edge: ['core', 'config', 'tool-sdk'],
  upstream: ['core', 'config', 'tool-sdk'],
  storage: ['core', 'config', 'tool-sdk'],
  limits: ['core', 'config', 'tool-sdk'],
  // A namespace groups function and custom tools, and validates its members as they do.
  'tools/namespace': ['tool-sdk', 'tools/function', 'tools/custom'],
  // Tool libraries are written against the SDK alone, as a third party's would be. Never each other.
  'tools/*': ['tool-sdk'],
  tools: ['tools/*', 'tool-sdk'],
  responses: ['core', 'config', 'tool-sdk', 'edge', 'upstream', 'limits'],
  messages: ['core', 'config', 'tool-sdk', 'edge', 'upstream', 'limits', 'responses'],
  state: ['core', 'config', 'tool-sdk', 'edge', 'upstream', 'storage', 'responses'],
  observability: ['core', 'config', 'tool-sdk', 'edge', 'storage', 'responses'],
  // Chat completions, completions, embeddings passed to the upstream, and batches over them and Responses.
  passthrough: ['core', 'config', 'tool-sdk', 'edge', 'upstream', 'limits', 'storage', 'responses'],
  // The OpenAPI document reads the routes of every controller and the DTOs that check their bodies.
  openapi: ['core', 'config', 'tool-sdk', 'edge', 'responses'],
  // The operator's console reads every store (behind an administrator key) and the usage report.
  console: ['core', 'config', 'tool-sdk', 'edge', 'storage', 'observability'],
  src: [
    'config',
    'tool-sdk',
    'core',
    'edge',
    'upstream',
    'storage',
    'limits',
    'tools',
    'tools/*',
    'responses',
    'messages',
    'state',
    'observability',
    'passthrough',
    'openapi',
    'console',
  ],
  'apps/simulator': ['src', 'config', 'core', 'tool-sdk'],
  'apps/*': ['src', 'config', 'core', 'tool-sdk', 'observability', 'state', 'tools/*', 'apps/simulator'],
  test: ['*'],
  bench: ['*'],
};

/**
 * Imports that break the layers today, each with the change that removes it.
 * An entry widens the layers for the files it names only. `npm run lint` fails
 * on an entry its files no longer need (scripts/check-known-debts.mjs): delete
 * it, and the lint keeps the debt from coming back.
 */
export const knownDebts = [];

/** The layers with a debt's extra edges added. */
function widened(also) {
  return Object.fromEntries(Object.entries(layers).map(([unit, allowed]) => [unit, [...allowed, ...(also[unit] ?? [])]]));
}

const boundaryRule = (table) => ['error', { layers: table, specsMayImport: ['*'] }];

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'node_modules/', 'bench/results/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // The code types its loose edges (test doubles, parsed JSON) with `any` on purpose, ~500 places.
      '@typescript-eslint/no-explicit-any': 'off',
      // `_name` marks a value left out on purpose (destructuring it away, an unused parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // A subscription is declared before the callback that reads it and assigned once after.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Class-validator metadata is keyed by class constructors, typed as `Function`.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // ANSI escapes in log and terminal handling are matched deliberately.
      'no-control-regex': 'off',
      // Object-literal getters forward to the instance through `self`.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
    },
  },
  // The console's page runs in the browser, not in Node.
  { files: ['libs/console/static/*.js'], languageOptions: { globals: { ...globals.browser } } },
  {
    files: ['**/*.ts', '**/*.mts'],
    plugins: { switchyard: boundaries },
    rules: { 'switchyard/dependency-direction': boundaryRule(layers) },
  },
  // Below the edge an error names its kind; only the edge (libs/edge/errors/error-kinds.ts) knows HTTP statuses.
  {
    files: ['libs/core/**/*.ts', 'libs/tool-sdk/**/*.ts', 'libs/tools/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    plugins: { 'switchyard-errors': domainErrors },
    // An upstream's own status is a fact about its answer, carried as data (`upstreamStatus`).
    rules: { 'switchyard-errors/no-http-status': ['error', { allow: ['UpstreamHttpError', 'ContextLengthExceededError'] }] },
  },
  // Packages of optional features load when the feature is first used, not at boot (issue 29: an idle
  // worker's memory). Types are erased and fine; values come from the feature's loader, which is named
  // here with the modules that loader itself imports. test/optional-modules.e2e-spec.ts and
  // test/mcp-sdk-lazy.e2e-spec.ts show the same at run time.
  {
    files: ['libs/**/*.ts', 'src/**/*.ts', 'apps/gateway/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/tools/code-interpreter/sandbox/kernel/jupyter-client-settings.ts', 'libs/tools/code-interpreter/sandbox/kernel/quiet-kernel-connection.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@modelcontextprotocol/sdk', '@modelcontextprotocol/sdk/*'],
              allowTypeImports: true,
              message: 'The MCP SDK loads with the first MCP connection: take its values from loadMcpSdk / loadedMcpSdk (libs/tools/mcp/mcp-sdk.ts).',
            },
            { group: ['jose'], allowTypeImports: true, message: 'jose loads with the first OIDC token checked (libs/state/auth/oidc.verifier.ts).' },
            {
              group: ['@jupyterlab/services', '@jupyterlab/*'],
              allowTypeImports: true,
              message: 'The Jupyter client loads with the first kernel (jupyterClient in libs/tools/code-interpreter/sandbox/kernel/jupyter-kernel.ts).',
            },
            {
              group: ['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources'],
              allowTypeImports: true,
              message: 'The tracing SDK loads only when tracing is on (TracingService.onModuleInit).',
            },
          ],
        },
      ],
    },
  },
  // scripts/check-known-debts.mjs lints without them to find entries nothing needs any more.
  ...(process.env.SWITCHYARD_LINT_WITHOUT_DEBTS ? [] : knownDebts).map(({ files, also }) => ({ files, rules: { 'switchyard/dependency-direction': boundaryRule(widened(also)) } })),
);
