import { join } from 'node:path';
import { defineConfigSection } from '#tool-sdk/index.js';
import { CODE_INTERPRETER_KEYS, CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings, parseCodeInterpreterSettings } from './code-interpreter-settings.js';

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
  keys: CODE_INTERPRETER_KEYS,
  fromDataDir: (dataDir) => ({ dataDir: join(dataDir, 'containers') }),
  parse: (section) => parseCodeInterpreterSettings(section as Record<string, unknown> | undefined),
});
