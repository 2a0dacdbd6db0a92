import { defineConfigSection, type KeyShape } from '#config/config-section.js';
import { CODE_INTERPRETER_SETTINGS, type CodeInterpreterSettings, DEFAULT_CODE_INTERPRETER_SETTINGS, parseCodeInterpreterSettings } from './code-interpreter-settings.js';

const keys: KeyShape = {
  ...Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS).map((k) => [k, true as const])),
  cpython: Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS.cpython).map((k) => [k, true as const])),
  internal: Object.fromEntries(Object.keys(DEFAULT_CODE_INTERPRETER_SETTINGS.internal).map((k) => [k, true as const])),
};

/** The `codeInterpreter` section: the sandbox backend and its bounds. */
export const codeInterpreterConfigSection = defineConfigSection<CodeInterpreterSettings>({
  key: 'codeInterpreter',
  token: CODE_INTERPRETER_SETTINGS,
  env: [
    { env: 'CODE_INTERPRETER_BACKEND', path: 'backend', kind: 'string' },
    // Set by the primary of worker mode for its workers; replicas are given the same value.
    { env: 'SWITCHYARD_INTERNAL_SECRET', path: 'internal.secret', kind: 'string' },
    { env: 'SWITCHYARD_INTERNAL_URL', path: 'internal.url', kind: 'string' },
  ],
  keys,
  parse: (section) => parseCodeInterpreterSettings(section as Record<string, unknown> | undefined),
});
