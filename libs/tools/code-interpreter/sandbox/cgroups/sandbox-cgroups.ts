import { existsSync, mkdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A container's resource boundary, from the kernel's cgroups: its processes
 * in a cgroup of their own, created under the gateway's own cgroup (as
 * `/proc/self/cgroup` names it, nothing elsewhere in the host's hierarchy),
 * with a process cap, a memory cap for all of them together, and a CPU weight
 * below the gateway's. cgroup v2 where `root` is the unified hierarchy, else
 * the v1 controllers mounted at `root/<controller>`.
 */

/** The limits a cgroup gives a container; each one the host may lack. */
export type CgroupLimit = 'processes' | 'memory' | 'cpu';
export const CGROUP_LIMITS: readonly CgroupLimit[] = ['processes', 'memory', 'cpu'];

export interface CgroupLimits {
  /** pids.max: fork() fails past it. */
  maxProcesses: number;
  /** Memory of every process of the container together (and its tmpfs pages). */
  memoryBytes: number;
  /** v2's cpu.weight scale (the gateway's is 100): v1's cpu.shares is 1024 × weight / 100. */
  cpuWeight: number;
}

const CGROUP_MAGIC = 0x27e0eb;
const CGROUP2_MAGIC = 0x63677270;
const V1_CONTROLLER: Record<CgroupLimit, string> = { processes: 'pids', memory: 'memory', cpu: 'cpu' };
const V2_CONTROLLER: Record<CgroupLimit, string> = { processes: 'pids', memory: 'memory', cpu: 'cpu' };
/** Names this module makes: nothing it removes can be another's. */
const NAME = /^[a-zA-Z0-9_.-]{1,100}$/;

function magic(path: string): number | undefined {
  try {
    return Number(statfsSync(path).type);
  } catch {
    return undefined;
  }
}

/** `/proc/self/cgroup` parsed: v1 `controller → path` (comma lists split), v2 under `''`. */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    for (const c of m[1] === '' ? [''] : m[1].split(',')) out.set(c, m[2]);
  }
  return out;
}

/** What one file write into a cgroup directory says. */
interface LimitFile {
  file: string;
  value: string;
}

/** One controller's place: the directory under which the gateway's sandboxes get theirs. */
interface Place {
  limits: CgroupLimit[];
  parent: string;
}

/**
 * What this host gives: where each limit's controller is, or why it is
 * missing. Detected once at boot; `create` makes a container's cgroup.
 */
export class CgroupHost {
  private constructor(
    readonly version: 1 | 2 | null,
    private readonly places: Place[],
    /** Each limit the host does not give, with the reason (for the start-up summary). */
    readonly missing: ReadonlyArray<{ limit: CgroupLimit; why: string }>,
  ) {}

  /**
   * Looks at `root` (the setting `codeInterpreter.sandbox.cgroupRoot`) and
   * the gateway's own cgroups. A root that is not a cgroup file system, a
   * controller not mounted or not enabled, a directory the gateway cannot
   * create: that limit is missing, and says why.
   */
  static detect(root: string, procCgroup: string = readFileSync('/proc/self/cgroup', 'utf8')): CgroupHost {
    const own = parseProcCgroup(procCgroup);
    const missing: Array<{ limit: CgroupLimit; why: string }> = [];
    const places: Place[] = [];
    if (magic(root) === CGROUP2_MAGIC) {
      const parent = join(root, own.get('') ?? '/');
      const enabled = readText(join(parent, 'cgroup.subtree_control'))?.split(/\s+/) ?? [];
      const offered = readText(join(parent, 'cgroup.controllers'))?.split(/\s+/) ?? [];
      const have: CgroupLimit[] = [];
      for (const limit of CGROUP_LIMITS) {
        const c = V2_CONTROLLER[limit];
        if (enabled.includes(c)) have.push(limit);
        else if (!offered.includes(c)) missing.push({ limit, why: `the ${c} controller is not offered to ${parent}` });
        else {
          // v2 lets a cgroup hand a controller to its children only while it holds no process itself.
          try {
            writeFileSync(join(parent, 'cgroup.subtree_control'), `+${c}`);
            have.push(limit);
          } catch (err) {
            missing.push({
              limit,
              why: `${parent} cannot enable ${c} for its children (${(err as NodeJS.ErrnoException).code}; run the gateway in a leaf cgroup of its own parent)`,
            });
          }
        }
      }
      if (have.length > 0) places.push(...checkWritable({ limits: have, parent }, missing));
      return new CgroupHost(2, places, missing);
    }
    for (const limit of CGROUP_LIMITS) {
      const c = V1_CONTROLLER[limit];
      const mount = join(root, c);
      if (magic(mount) !== CGROUP_MAGIC) {
        missing.push({ limit, why: `${mount} is not a cgroup v1 ${c} hierarchy` });
        continue;
      }
      const path = own.get(c);
      if (path === undefined) {
        missing.push({ limit, why: `/proc/self/cgroup names no ${c} cgroup` });
        continue;
      }
      places.push(...checkWritable({ limits: [limit], parent: join(mount, path) }, missing));
    }
    return new CgroupHost(places.length > 0 ? 1 : null, places, missing);
  }

  has(limit: CgroupLimit): boolean {
    return this.places.some((p) => p.limits.includes(limit));
  }

  /** The directories a container's cgroup `name` has (one per v1 controller, one in v2), with the files that set its limits, in order. */
  plan(name: string, limits: CgroupLimits): Array<{ parent: string; dir: string; files: LimitFile[] }> {
    if (!NAME.test(name)) throw new Error(`not a sandbox cgroup name: ${name}`);
    return this.places.map((p) => ({ parent: p.parent, dir: join(p.parent, `sy-${name}`), files: p.limits.flatMap((l) => limitFiles(this.version, l, limits)) }));
  }

  /** Makes the container's cgroup (an existing one of the same name is emptied and reused) and sets its limits. */
  create(name: string, limits: CgroupLimits): SandboxCgroup {
    const plan = this.plan(name, limits);
    for (const { dir, files } of plan) {
      try {
        mkdirSync(dir, { mode: 0o755 });
      } catch (err) {
        // Left by a process that died (the name is the container's): emptied, then reused.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        new SandboxCgroup([dir]).killAll();
      }
      for (const f of files) {
        // memory.memsw (swap too) exists only where the kernel accounts swap.
        if (f.file.includes('memsw') && !existsSync(join(dir, f.file))) continue;
        writeFileSync(join(dir, f.file), f.value);
      }
    }
    return new SandboxCgroup(plan.map((p) => p.dir));
  }

  /** The cgroup `name` as it is now (after a restart of the server that made it, say): to empty and remove it. */
  existing(name: string): SandboxCgroup {
    return new SandboxCgroup(this.plan(name, { maxProcesses: 1, memoryBytes: 1, cpuWeight: 1 }).map((p) => p.dir));
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** A probe directory made and removed: the gateway must be allowed to make cgroups there (root, or a delegated subtree). */
function checkWritable(place: Place, missing: Array<{ limit: CgroupLimit; why: string }>): Place[] {
  const probe = join(place.parent, `sy-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return [place];
  } catch (err) {
    for (const limit of place.limits) missing.push({ limit, why: `cannot create a cgroup under ${place.parent} (${(err as NodeJS.ErrnoException).code})` });
    return [];
  }
}

function limitFiles(version: 1 | 2 | null, limit: CgroupLimit, l: CgroupLimits): LimitFile[] {
  if (limit === 'processes') return [{ file: 'pids.max', value: String(l.maxProcesses) }];
  if (limit === 'cpu')
    return version === 2 ? [{ file: 'cpu.weight', value: String(l.cpuWeight) }] : [{ file: 'cpu.shares', value: String(Math.max(2, Math.round((1024 * l.cpuWeight) / 100))) }];
  if (version === 2) {
    return [
      { file: 'memory.max', value: String(l.memoryBytes) },
      { file: 'memory.swap.max', value: '0' },
      // The OOM killer takes the whole container, not its largest process alone.
      { file: 'memory.oom.group', value: '1' },
    ];
  }
  // memsw after memory: the kernel refuses a memsw limit below the memory one.
  return [
    { file: 'memory.limit_in_bytes', value: String(l.memoryBytes) },
    { file: 'memory.memsw.limit_in_bytes', value: String(l.memoryBytes) },
  ];
}

/** Facts of one process from `/proc/<pid>/stat`. */
interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  start: number;
}

function procStat(pid: number): ProcStat | undefined {
  const text = readText(`/proc/${pid}/stat`);
  if (!text) return undefined;
  // The command name is in parentheses and may itself hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0], ppid: Number(fields[1]), start: Number(fields[19]) };
}

/** One container's cgroup: its directories (one per v1 controller). */
export class SandboxCgroup {
  constructor(readonly dirs: readonly string[]) {}

  /** The files a process writes its own pid into to join (before it drops its privileges). */
  get procsFiles(): string[] {
    return this.dirs.map((d) => join(d, 'cgroup.procs'));
  }

  /** Every process in it (the union of the controllers'). */
  pids(): number[] {
    const all = new Set<number>();
    for (const d of this.dirs) {
      for (const line of (readText(join(d, 'cgroup.procs')) ?? '').split('\n')) if (/^\d+$/.test(line)) all.add(Number(line));
    }
    return [...all];
  }

  /** A memory figure of the cgroup (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`), if it has one. */
  memoryPeak(): number | undefined {
    for (const d of this.dirs) {
      for (const f of ['memory.max_usage_in_bytes', 'memory.peak']) {
        const v = readText(join(d, f));
        if (v && /^\d+$/.test(v)) return Number(v);
      }
    }
    return undefined;
  }

  /**
   * SIGKILLs every process in it but `keep`, again until none is left (a
   * process may fork while the others die; the process cap bounds how
   * many), at most `rounds` passes. Returns how many it killed.
   */
  killAll(keep: ReadonlySet<number> = new Set(), rounds = 50): number {
    const killed = new Set<number>();
    for (let i = 0; i < rounds; i++) {
      const left = this.running().filter((p) => !keep.has(p));
      if (left.length === 0) break;
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
          killed.add(pid);
        } catch {
          // Gone already.
        }
      }
    }
    return killed.size;
  }

  /** Its processes but the dead ones not yet reaped by their parent (zombies hold a pid, nothing else). */
  running(): number[] {
    return this.pids().filter((pid) => {
      const state = procStat(pid)?.state;
      return state !== undefined && state !== 'Z' && state !== 'X';
    });
  }

  /**
   * Kills what a call left behind in a long-lived sandbox: everything but
   * the sandbox's own chain (bubblewrap, its init, and the init's first
   * child, the kernel: the oldest), found from the processes' parents and
   * start times, so no process the program starts can pass for one of them.
   */
  async killAllButKernel(timeoutMs = 2_000): Promise<number> {
    const { keep, killed } = this.killStrays();
    // SIGKILL is delivered and the processes exit asynchronously: the call is answered once they are gone.
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && this.running().some((pid) => !keep.has(pid));) {
      this.killAll(keep, 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return killed;
  }

  private killStrays(): { keep: Set<number>; killed: number } {
    const stats = this.pids()
      .map(procStat)
      .filter((s): s is ProcStat => s !== undefined && s.state !== 'Z' && s.state !== 'X');
    const inside = new Set(stats.map((s) => s.pid));
    const oldestChild = (of: number): ProcStat | undefined => stats.filter((s) => s.ppid === of).sort((a, b) => a.start - b.start || a.pid - b.pid)[0];
    const keep = new Set<number>();
    const top = stats.filter((s) => !inside.has(s.ppid)).sort((a, b) => a.start - b.start)[0];
    if (top) {
      keep.add(top.pid);
      const init = oldestChild(top.pid);
      if (init) {
        keep.add(init.pid);
        const kernel = oldestChild(init.pid);
        if (kernel) keep.add(kernel.pid);
      }
    }
    return { keep, killed: this.killAll(keep) };
  }

  /** Processes the OOM killer took in it so far (v1 `memory.oom_control`, v2 `memory.events`). */
  oomKills(): number {
    for (const d of this.dirs) {
      for (const f of ['memory.oom_control', 'memory.events']) {
        const m = /^oom_kill (\d+)$/m.exec(readText(join(d, f)) ?? '');
        if (m) return Number(m[1]);
      }
    }
    return 0;
  }

  /** Kills everything in it and removes its directories; waits (bounded) for the kernel to let go of dying processes. */
  async remove(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let left = [...this.dirs];
    while (left.length > 0) {
      this.killAll();
      left = left.filter((d) => {
        try {
          rmdirSync(d);
          return false;
        } catch (err) {
          return (err as NodeJS.ErrnoException).code !== 'ENOENT';
        }
      });
      if (left.length === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    return left.length === 0;
  }

  /** True while any of its directories exists. */
  exists(): boolean {
    return this.dirs.some((d) => existsSync(d));
  }
}
