import { readdirSync, readFileSync } from 'node:fs';

/** /proc's clock ticks per second, which Linux fixes at 100 for user space. */
const USER_HZ = 100;

/**
 * CPU time (user + system, µs) of a process and all its descendants, read
 * from `/proc` (Linux): the gateway's primary and workers together, which
 * `process.cpuUsage()` in any one of them cannot see. Processes that ended
 * in between are missing from a later reading, so read it while the tree is
 * steady. Undefined where `/proc` is not there.
 */
export function treeCpuUs(rootPid: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parent.set(Number(name), Number(fields[1]));
    ticks.set(Number(name), Number(fields[11]) + Number(fields[12]));
  }
  let total = 0;
  for (const [pid, own] of ticks) {
    for (let p: number | undefined = pid; p !== undefined && p > 0; p = parent.get(p)) {
      if (p === rootPid) {
        total += own;
        break;
      }
    }
  }
  return (total / USER_HZ) * 1_000_000;
}

/** CPU time (µs) the whole machine spent busy so far, all cores together, from `/proc/stat`; undefined without it. */
export function machineBusyUs(): number | undefined {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  // cpu user nice system idle iowait irq softirq steal ...: busy is all but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return ((user + nice + system + irq + softirq + (steal || 0)) / USER_HZ) * 1_000_000;
}
