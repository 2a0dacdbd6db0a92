// Module hooks that let a child process run the TypeScript sources directly
// (`node --import ./test/support/process/ts-register.mjs apps/gateway/src/main.ts`),
// so process-level tests start the real entry points without a prior build.
// The transform is the one Jest uses (swc, legacy decorators with metadata).
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';
// The package.json `imports` condition that points `#core/...` at the sources;
// without it the aliases resolve into dist/.
import { SOURCE_CONDITION } from '../../../scripts/source-units.mjs';

const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('#') && !context.conditions.includes(SOURCE_CONDITION)) {
    return next(specifier, { ...context, conditions: [SOURCE_CONDITION, ...context.conditions] });
  }
  // Sources import each other as `./x.js`; only the `.ts` file exists.
  if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:')) && context.parentURL?.startsWith('file:')) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (!existsSync(fileURLToPath(new URL(specifier, context.parentURL))) && existsSync(fileURLToPath(candidate))) {
      return next(candidate.href, context);
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  const source = await readFile(path, 'utf8');
  const { code } = await transform(source, { ...SWC_OPTIONS, filename: path });
  return { format: 'module', source: code, shortCircuit: true };
}
