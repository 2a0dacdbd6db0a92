import type { CodeInterpreterSettings } from '../../config/code-interpreter-settings.js';
import { type CgroupLimit, CgroupHost, type CgroupLimits, type SandboxCgroup } from './sandbox-cgroups.js';

/**
 * Joins the cgroup (each `cgroup.procs` named before `--`) as the process
 * still privileged to, then execs the rest: the command that drops to the
 * sandbox's uid and starts bubblewrap. A join that fails stops the start
 * (status 125), so no sandbox ever runs outside its boundary by accident.
 */
const JOIN_THEN_EXEC = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

const LABEL: Record<CgroupLimit, string> = { processes: 'process cap', memory: 'memory cap', cpu: 'CPU weight' };

/**
 * The resource boundary the `kernel` and `cpython` backends put each
 * container in: a cgroup of its own (what the host offers of it, detected
 * once) and an unprivileged host uid. Where the host lacks a limit, the
 * start-up summary names it and the code interpreter serves one owner only,
 * unless `sandbox.allowManyOwnersWithoutLimits` says otherwise.
 */
export class SandboxBoundary {
  /** The host uid/gid the sandbox drops to (the gateway runs as root), or undefined (it already runs unprivileged). */
  readonly runAs: { uid: number; gid: number } | undefined;

  constructor(
    private readonly settings: CodeInterpreterSettings,
    readonly cgroups: CgroupHost = CgroupHost.detect(settings.sandbox.cgroupRoot),
    gatewayUid: number = process.getuid?.() ?? 0,
  ) {
    this.runAs = gatewayUid === 0 ? { uid: settings.sandbox.uid, gid: settings.sandbox.gid } : undefined;
  }

  /** One per settings object: every backend and the store of a module share the detection. */
  static for(settings: CodeInterpreterSettings): SandboxBoundary {
    let found = BOUNDARIES.get(settings);
    if (!found) BOUNDARIES.set(settings, (found = new SandboxBoundary(settings)));
    return found;
  }

  get limits(): CgroupLimits {
    return { maxProcesses: this.settings.sandbox.maxProcesses, memoryBytes: this.settings.memoryLimitMb * 1024 * 1024, cpuWeight: this.settings.sandbox.cpuWeight };
  }

  /** True when a limit is missing and the operator did not accept serving many owners without it. */
  get singleOwner(): boolean {
    return this.cgroups.missing.length > 0 && !this.settings.sandbox.allowManyOwnersWithoutLimits;
  }

  /** The container's cgroup for one sandbox's life (a name unique to it), or undefined where the host offers none. */
  create(name: string): SandboxCgroup | undefined {
    return this.cgroups.version === null ? undefined : this.cgroups.create(name, this.limits);
  }

  /**
   * The command that starts `command` (bubblewrap and its arguments) inside
   * `cgroup`, as the sandbox's uid: the cgroup is joined before anything of
   * the sandbox exists, so every process it ever has is counted.
   */
  wrap(cgroup: SandboxCgroup | undefined, command: string[]): string[] {
    const drop = this.runAs ? ['/usr/bin/setpriv', `--reuid=${this.runAs.uid}`, `--regid=${this.runAs.gid}`, '--clear-groups', '--'] : [];
    return ['/bin/sh', '-c', JOIN_THEN_EXEC, 'sh', ...(cgroup?.procsFiles ?? []), '--', ...drop, ...command];
  }

  /** The start-up summary's words on the boundary: what each container gets, and each missing limit with its reason. */
  describe(): string {
    const l = this.limits;
    const have: string[] = [];
    if (this.cgroups.has('processes')) have.push(`at most ${l.maxProcesses} processes`);
    if (this.cgroups.has('memory')) have.push(`${this.settings.memoryLimitMb} MiB memory`);
    if (this.cgroups.has('cpu')) have.push(`CPU weight ${l.cpuWeight} (gateway 100)`);
    const who = this.runAs ? `uid ${this.runAs.uid}` : `the gateway's uid ${process.getuid?.() ?? '?'}`;
    const parts = [`each container in its own cgroup v${this.cgroups.version ?? '-'} as ${who}${have.length ? `: ${have.join(', ')}` : ''}`];
    if (this.cgroups.missing.length > 0) {
      parts.push(`MISSING ${this.cgroups.missing.map((m) => `${LABEL[m.limit]} (${m.why})`).join('; ')}`);
      parts.push(
        this.settings.sandbox.allowManyOwnersWithoutLimits
          ? 'serving many owners without them (codeInterpreter.sandbox.allowManyOwnersWithoutLimits)'
          : 'so one owner only is served (codeInterpreter.sandbox.allowManyOwnersWithoutLimits: true to serve many)',
      );
    }
    return parts.join('; ');
  }
}

const BOUNDARIES = new WeakMap<CodeInterpreterSettings, SandboxBoundary>();
