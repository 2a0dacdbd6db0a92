import { readFileSync } from 'node:fs';
import { codeOrigin } from './lib/code-origin.js';

/**
 * Summarises a sampled allocation profile (`cpu-ratios --alloc-profile`
 * writes one per case, build and round): bytes allocated per request by the
 * function that allocated them and by package, collected objects included,
 * so what is shown is the garbage a request makes, not what it keeps.
 *
 *   node dist/bench/alloc-summary.js FILE.heapprofile REQUESTS [top=30]
 *
 * REQUESTS is the number the bench printed beside the file. Sampling counts
 * an allocation with a probability proportional to its size (one sample per
 * 4 KiB on average), so small figures are estimates.
 */
interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

function main(): void {
  const [file, requestsArg, topArg] = process.argv.slice(2);
  const requests = Number(requestsArg);
  if (!file || !(requests > 0)) {
    console.error('usage: node dist/bench/alloc-summary.js FILE.heapprofile REQUESTS [top]');
    process.exit(2);
  }
  const top = Number(topArg ?? 30);
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: SamplingNode };
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  const stack: SamplingNode[] = [head];
  while (stack.length > 0) {
    const node = stack.pop()!;
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const origin = codeOrigin(url);
    total += node.selfSize;
    byFunction.set(
      `${functionName || '(anonymous)'}  ${origin}:${lineNumber + 1}`,
      (byFunction.get(`${functionName || '(anonymous)'}  ${origin}:${lineNumber + 1}`) ?? 0) + node.selfSize,
    );
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + node.selfSize);
  }
  const perRequest = (bytes: number) => `${(bytes / requests / 1024).toFixed(2).padStart(8)} KiB`;
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, bytes]) => `${perRequest(bytes)}  ${((bytes / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
  console.log(`${perRequest(total)} allocated per request over ${requests} requests\n\nby package / file:`);
  console.log(rows(byOrigin).join('\n'));
  console.log('\nby function:');
  console.log(rows(byFunction).join('\n'));
}

main();
