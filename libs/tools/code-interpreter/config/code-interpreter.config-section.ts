import { join } from 'node:path';
import { defineConfigSection, type KeyShape } from '#tool-sdk/index.js';
import { CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings, DEFAULT_CODE_INTERPRETER_SETTINGS, parseCodeInterpreterSettings } from './code-interpreter-settings.js';

const keys: KeyShape = {
  ...Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS).map((k) => [k, true as const])),
  cpython: Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS.cpython).map((k) => [k, true as const])),
  kernel: Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS.kernel).map((k) => [k, true as const])),
  internal: Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS.internal).map((k) => [k, true as const])),
};

/** The `codeInterpreter` section: the sandbox backend and its bounds. */
export const codeInterpreterConfigSection = defineConfigSection<CodeInterpreterSettings>({
  key: 'codeInterpreter',
  token: CODE_INTERPRETER_SETTINGS,
  env: [
    { env: 'CODE_INTERPRETER_BACKEND', path: 'backend', kind: 'string' },
    { env: 'CODE_INTERPRETER_MAX_CONTAINERS_PER_OWNER', path: 'maxContainersPerOwner', kind: 'int' },
    { env: 'CODE_INTERPRETER_MAX_BYTES_PER_OWNER', path: 'maxBytesPerOwner', kind: 'int' },
    // Made by the primary of worker mode for its workers (handed over with the other secrets); replicas are given the same value.
    { env: 'SWITCHYARD_INTERNAL_SECRET', path: 'internal.secret', kind: 'string', secret: true },
    { env: 'SWITCHYARD_INTERNAL_URL', path: 'internal.url', kind: 'string' },
  ],
  keys,
  fromDataDir: (dataDir) => ({ dataDir: join(dataDir, 'containers') }),
  parse: (section) => parseCodeInterpreterSettings(section as Record<string, unknown> | undefined),
});
