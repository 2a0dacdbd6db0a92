import { readFileSync } from 'node:fs';
import { codeOrigin } from './lib/code-origin.js';

/**
 * Summarises a `.cpuprofile` written by `node --cpu-prof` (`npm run bench --
 * --profile` writes them to bench/results/profiles): self time by function
 * and by package, idle and GC shown apart.
 *
 *   node dist/bench/profile-summary.js bench/results/profiles/<file>.cpuprofile [top=30] [requests]
 *
 * With the number of requests the profile covers (`cpu-ratios --load-profile`
 * prints it), each line also gives its µs per request.
 *
 * Inclusive time (a function and everything it called) is counted once per
 * stack, at the outermost frame of that function, so recursion is not double-counted.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function main(): void {
  const [file, topArg, requestsArg] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node dist/bench/profile-summary.js FILE.cpuprofile [top] [requests]');
    process.exit(2);
  }
  const top = Number(topArg ?? 30);
  const requests = requestsArg === undefined ? undefined : Number(requestsArg);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const key = `${name}  ${codeOrigin(node.callFrame.url)}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const group = ['(garbage collector)', '(program)'].includes(name) ? name : codeOrigin(node.callFrame.url);
    pkg.set(group, (pkg.get(group) ?? 0) + us);
  }
  // Inclusive time: walk the call tree, crediting each key once per stack.
  const inclusive = new Map<string, number>();
  const keyOf = (node: ProfileNode) =>
    `${node.callFrame.functionName || '(anonymous)'}  ${codeOrigin(node.callFrame.url)}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
  const walk = (id: number, open: Set<string>): number => {
    const node = byId.get(id)!;
    const key = keyOf(node);
    const own = node.callFrame.functionName === '(idle)' ? 0 : (selfUs.get(id) ?? 0);
    const outermost = !open.has(key);
    if (outermost) open.add(key);
    let sum = own;
    for (const child of node.children ?? []) sum += walk(child, open);
    if (outermost) {
      open.delete(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + sum);
    }
    return sum;
  };
  walk(profile.nodes[0].id, new Set());
  const perRequest = (us: number) => (requests ? `${(us / requests).toFixed(1).padStart(8)} µs/req` : '');
  const line = (us: number) => `${(us / 1000).toFixed(0).padStart(8)} ms ${((us / busy) * 100).toFixed(1).padStart(5)} %${perRequest(us)}`;
  console.log(
    `profile ${(total / 1e6).toFixed(1)} s; busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms (shares below are of busy time)${requests ? `; ${(busy / requests).toFixed(0)} µs busy per request over ${requests}` : ''}\n`,
  );
  console.log('by package / file:');
  for (const [k, us] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${line(us)}  ${k}`);
  console.log('\nby function (self time):');
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${line(us)}  ${k}`);
  console.log('\nby function (inclusive, JavaScript frames only):');
  const js = [...inclusive].filter(([k]) => !k.includes('(native)') && !k.startsWith('(root)') && !k.includes('node internals'));
  for (const [k, us] of js.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${line(us)}  ${k}`);
}

main();
