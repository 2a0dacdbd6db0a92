#!/usr/bin/env node
// `node scripts/apply-aliases.mjs [--check]`: imports that cross from one unit
// into another library (`../../core/loop/x.js` in libs/tools/mcp) become the
// alias form (`#core/loop/x.js`); an alias that points back into the importer's
// own unit becomes relative again. package.json `imports` is rewritten to list
// one alias per folder under libs/ (and src/), so a new library gets its alias
// on the next run. Running it twice changes nothing the second time.
// With --check it writes nothing and exits 1 if anything would change.
// Usage: node scripts/apply-aliases.mjs [--check] [--root <dir>]
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { SOURCE_ROOTS, aliasDirectories, aliasSpecifier, aliasTarget, importsField, unitOf } from './source-units.mjs';

const args = process.argv.slice(2);
const checkOnly = args.includes('--check');
// `--root <dir>` works on another checkout (the tests use a scratch tree).
const root = args.includes('--root') ? resolve(args[args.indexOf('--root') + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toPosix = (path) => path.split(sep).join('/');

function* sourceFiles(dir) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mts|cts)$/.test(entry.name)) yield path;
  }
}

/** The specifier `file` should use for `spec`, or null to leave it. */
function rewrite(file, spec, aliasDirs) {
  const from = unitOf(file);
  if (spec.startsWith('./') || spec.startsWith('../')) {
    const target = toPosix(relative(root, resolve(root, dirname(file), spec)));
    if (unitOf(target) === from) return null;
    return aliasSpecifier(target);
  }
  const target = aliasTarget(spec, aliasDirs);
  if (!target || unitOf(target) !== from) return null;
  const path = posix.relative(posix.dirname(file), target);
  return path.startsWith('.') ? path : `./${path}`;
}

/** The module specifiers of a file: import/export declarations, import() and import types, never strings or comments that merely look like them. */
function moduleSpecifiers(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = [];
  const visit = (node) => {
    let literal;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) literal = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) literal = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal = node.argument.literal;
    if (literal && ts.isStringLiteral(literal)) found.push({ name: literal.text, start: literal.getStart(source) + 1, end: literal.getEnd() - 1 });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.sort((a, b) => a.start - b.start);
}

/** The file's text with its imports rewritten, and how many changed. */
function rewriteFile(file, text, aliasDirs) {
  let out = '';
  let last = 0;
  let changed = 0;
  for (const { name, start, end } of moduleSpecifiers(file, text)) {
    const next = rewrite(file, name, aliasDirs);
    if (next === null || next === name) continue;
    // Specifiers with escapes are not ours to touch; the plain ones appear verbatim.
    if (text.slice(start, end) !== name) continue;
    out += text.slice(last, start) + next;
    last = end;
    changed++;
  }
  return { text: out + text.slice(last), changed };
}

function updatePackageImports() {
  const path = join(root, 'package.json');
  const before = readFileSync(path, 'utf8');
  const pkg = JSON.parse(before);
  const ours = importsField(root);
  // Keep any entry that is not one of ours; ours are the `#name/*.js` patterns.
  const others = Object.fromEntries(Object.entries(pkg.imports ?? {}).filter(([key]) => !/^#[^/]+\/\*\.js$/.test(key)));
  const imports = { ...others, ...ours };
  if (!pkg.imports) {
    // Place it after `exports`, where a reader looks for the package's entry points.
    const rebuilt = {};
    for (const [key, value] of Object.entries(pkg)) {
      rebuilt[key] = value;
      if (key === 'exports') rebuilt.imports = imports;
    }
    if (!rebuilt.imports) rebuilt.imports = imports;
    Object.keys(pkg).forEach((key) => delete pkg[key]);
    Object.assign(pkg, rebuilt);
  } else {
    pkg.imports = imports;
  }
  const after = `${JSON.stringify(pkg, null, 2)}\n`;
  if (after === before) return false;
  if (!checkOnly) writeFileSync(path, after);
  return true;
}

const packageChanged = updatePackageImports();
const aliasDirs = aliasDirectories(root);
let files = 0;
let imports = 0;
for (const top of SOURCE_ROOTS) {
  if (!existsSync(join(root, top))) continue;
  for (const file of sourceFiles(top)) {
    const before = readFileSync(join(root, file), 'utf8');
    const { text, changed } = rewriteFile(file, before, aliasDirs);
    if (!changed) continue;
    files++;
    imports += changed;
    if (checkOnly) process.stdout.write(`${file}: ${changed} import(s) to rewrite\n`);
    else writeFileSync(join(root, file), text);
  }
}
const verb = checkOnly ? 'would rewrite' : 'rewrote';
process.stdout.write(`${verb} ${imports} import(s) in ${files} file(s)${packageChanged ? `; package.json imports ${checkOnly ? 'out of date' : 'updated'}` : ''}\n`);
if (checkOnly && (imports || packageChanged)) process.exit(1);
