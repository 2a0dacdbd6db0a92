import { readFileSync } from 'node:fs';

/**
 * What Linux's `/proc` says of processes, for the benches that measure
 * process trees (a gateway's primary and workers, a kernel host and its
 * kernels) and the machine as a whole: `process.cpuUsage()` in any one
 * process cannot see the others.
 */

/** /proc's clock ticks per second, which Linux fixes at 100 for user space. */
const USER_HZ = 100;

/** The processes `pid`'s main thread started (cluster workers, spawned children); none once it has gone. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** `pid` and all its descendants, each parent before its children. */
export function descendants(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(descendants)];
}

/** CPU time (user + system, all threads, µs) a process has used so far. Throws when it is not there. */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  // Fields after the command name, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1_000_000;
}

/**
 * The same for a process and its descendants together. A process that ended
 * in between is missing from a later reading, so read it while the tree is
 * steady. Undefined when the root cannot be read (no `/proc`, or it has gone).
 */
export function treeCpuUs(rootPid: number): number | undefined {
  let total = 0;
  for (const pid of descendants(rootPid)) {
    try {
      total += cpuUs(pid);
    } catch {
      if (pid === rootPid) return undefined;
    }
  }
  return total;
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
