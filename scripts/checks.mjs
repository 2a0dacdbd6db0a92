#!/usr/bin/env node
// The static checks `npm test` runs before Jest: the type-check, the lint and
// the format check. They read the same files and share nothing, and each
// spends most of its time on one core, so they run side by side (on the 2-core
// CI machine about 45 s instead of 70 one after another). Each one's output is
// printed whole when it ends, so that the three never interleave; the exit code
// is the first failure's, after all three have ended.
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => resolve({ script, code: 1, output: Buffer.from(`${err.message}\n`), seconds: 0 }));
    child.on('close', (code, signal) => resolve({ script, code: code ?? (signal ? 1 : 0), output: Buffer.concat(output), seconds: (Date.now() - started) / 1000 }));
  });
}

const results = await Promise.all(CHECKS.map(run));
let failed = 0;
for (const { script, code, output, seconds } of results) {
  process.stdout.write(`> npm run ${script}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${seconds.toFixed(1)} s\n`);
  if (output.length > 0) process.stdout.write(output);
  if (code !== 0 && failed === 0) failed = code;
}
process.exit(failed);
