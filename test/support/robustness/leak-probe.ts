import { setTimeout as sleep } from 'node:timers/promises';
import type { DialectClient } from '#upstream/dialect-client.base.js';
import type { UpstreamPoolStats } from '#upstream/http-transport.js';
import { UPSTREAM_CLIENT } from '#core/upstream/upstream-client.interface.js';
import type { GatewayStack } from '../gateway-harness.js';

/**
 * Checks that a finished exchange left nothing behind: no upstream socket
 * still marked in use, no request the simulator is still answering, and no
 * more referenced timers than before the case ran (unreferenced timers do not
 * show up in `getActiveResourcesInfo`, which is what keep-alive sockets use).
 */
export function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

export function upstreamPool(stack: GatewayStack): UpstreamPoolStats {
  return stack.app.get<DialectClient>(UPSTREAM_CLIENT).poolStats();
}

export async function waitFor(check: () => boolean, timeoutMs: number, everyMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

export interface LeakReport {
  simulatorActive: number;
  upstream: UpstreamPoolStats;
  timeouts: number;
  baselineTimeouts: number;
}

/**
 * Waits (briefly: cleanup is synchronous or nearly so) for everything to
 * settle, then reports what is left. The bound is short on purpose: a timer
 * that merely fires later than this was still left running.
 */
export async function settleAndReport(stack: GatewayStack, baselineTimeouts: number, timeoutMs = 1000): Promise<LeakReport> {
  const report = (): LeakReport => ({
    simulatorActive: stack.simulator.stats.active,
    upstream: upstreamPool(stack),
    timeouts: activeTimeouts(),
    baselineTimeouts,
  });
  await waitFor(() => {
    const r = report();
    return r.simulatorActive === 0 && r.upstream.active === 0 && r.upstream.queued === 0 && r.timeouts <= baselineTimeouts;
  }, timeoutMs);
  return report();
}
