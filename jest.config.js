// ESM all the way: Nest 12 ships ES modules only, so Jest runs with
// --experimental-vm-modules and swc keeps `import` statements intact.
import { SOURCE_CONDITION } from './scripts/source-units.mjs';

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  // Resolves the `#core/...` aliases (package.json `imports`) to the TypeScript
  // sources instead of dist/; see scripts/source-units.mjs.
  testEnvironmentOptions: { customExportConditions: [SOURCE_CONDITION, 'node', 'node-addons'] },
  rootDir: '.',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The example app imports the package by its public name, as a consumer would.
    '^switchyard-gateway$': '<rootDir>/src/index.ts',
    '^switchyard-gateway/microservice$': '<rootDir>/src/microservice.ts',
    '^switchyard-gateway/testing$': '<rootDir>/apps/testing/src/index.ts',
  },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'es6' },
        sourceMaps: 'inline',
      },
    ],
  },
  setupFiles: ['reflect-metadata'],
  testTimeout: 20000,
  // Three test files at a time on the 2-core machine: many suites spend their time waiting on child
  // processes (gateways, workers, kernels, package installs) rather than on a core. The whole suite
  // took 848 s with two (CI, quiet machine) and 692 s with three, beside a benchmark, all passing.
  // On 2026-12-04 with three: 849 s on a quiet machine, the cores busy 84 % of the run (1 438 s of
  // CPU); the files' own CPU, not waiting, is what the suite's length is made of now.
  maxWorkers: 3,
  // The slowest files first, so a fresh checkout's run does not end on one of them alone.
  testSequencer: '<rootDir>/test/support/slow-first.sequencer.mjs',
  // How long a worker may take to exit after its last file before Jest kills it and
  // reports a leak. Workers that finished cleanly (no handle left open, exit code 0)
  // were seen taking ~750 ms to exit on a loaded 2-core machine, past the 500 ms
  // default; a real leak never exits on its own, so it is still reported.
  workerGracefulExitTimeout: 5_000,
  reporters: ['default', '<rootDir>/test/support/plain-summary.reporter.js'],
};
