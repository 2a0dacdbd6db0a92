// Module hooks that let a child process run the TypeScript sources directly
// (`node --import ./test/support/process/ts-register.mjs apps/gateway/src/main.ts`),
// so process-level tests start the real entry points without a prior build.
// The transform is the one Jest uses (swc, legacy decorators with metadata).
// Its output is kept on disk by a hash of the source: a suite starts the
// gateway dozens of times (and each worker of a worker-mode gateway loads
// every module again), and compiling the same ~480 files anew for each was
// most of a start-up on a loaded machine.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
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

const CACHE_DIR = fileURLToPath(new URL('../../../node_modules/.cache/switchyard-ts-loader/', import.meta.url));
const SWC_VERSION = JSON.parse(readFileSync(new URL('../../../node_modules/@swc/core/package.json', import.meta.url), 'utf8')).version;
const CACHE_SALT = `${SWC_VERSION}\0${JSON.stringify(SWC_OPTIONS)}\0`;

/** The compiled module: from the cache when this exact source was compiled before (the path is in the key: the source map names it). */
async function compile(path, source) {
  const key = createHash('sha256').update(CACHE_SALT).update(path).update('\0').update(source).digest('hex');
  const file = `${CACHE_DIR}${key}.js`;
  try {
    return await readFile(file, 'utf8');
  } catch {
    // Not compiled yet.
  }
  const { code } = await transform(source, { ...SWC_OPTIONS, filename: path });
  try {
    // Written aside and renamed: processes starting at once never read a half-written entry.
    await mkdir(CACHE_DIR, { recursive: true });
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await writeFile(partial, code);
    await rename(partial, file);
  } catch {
    // A read-only tree only loses the cache.
  }
  return code;
}

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
  return { format: 'module', source: await compile(path, source), shortCircuit: true };
}
