// Jest orders a run by the timings of the last one, and a fresh checkout (CI)
// has none, so it falls back to file size: the slowest files, which are small
// (the package install, the entry points, kernels and sandboxes), then start
// last and one worker runs them alone while the other idles. These go first;
// everything else keeps Jest's own order.
//
// Ordered by the CPU each file took alone (user+sys of the whole process tree,
// kernels and sandboxes included, read from a cgroup of its own; `jest
// --maxWorkers=1 <file>`, 2026-12-07, on the shared 2-core machine): the suite's
// length is its CPU, the cores being busy most of a run. Seconds in the comments.
// Five files were changed later that day to do less work; each was measured
// alone before and after the change the same way (a cpuacct cgroup of its own,
// on the same machine, busier by then, where every number ran higher), and its
// number here is the one above scaled by that ratio: code-interpreter
// (48.2 and 47.4 s, then 46.8 and 46.3), package (42.2, then 36.3 and 43.0: a
// tsc of 4.2-4.7 s less), code-interpreter-kernel (39.4 and 40.9, then 38.6 and 39.7),
// containers-many-processes (26.2, then 24.7 and 24.1), ingestion-event-loop (18.3 and
// 17.9, then 12.4 and 12.9).
// Four files measured later (2026-12-07, each alone in a cpuacct cgroup, `--maxWorkers=1`, on the
// shared machine at a load of ~11, where numbers run high) took 10.7-14 s and had no place in the
// list: a fresh checkout started them last. They are placed by those numbers.
// Two files wait more than they compute (the CPython backend's spec: 4 s of CPU
// in 90 s; the file-search store's: 5 s in 55 s); they keep a place in the list.
import Sequencer from '@jest/test-sequencer';

const SLOW_FIRST = [
  'libs/tools/code-interpreter/sandbox/kernel/kernel-sandbox.backend.spec.ts', // 31
  'test/operator-errors.e2e-spec.ts', // 29
  'test/code-interpreter.e2e-spec.ts', // 27
  'libs/tools/code-interpreter/sandbox/pyodide/pyodide-sandbox.backend.spec.ts', // 26
  'test/code-interpreter-kernel.e2e-spec.ts', // 25
  'test/package.e2e-spec.ts', // 23
  'test/broker-rolling-restart.e2e-spec.ts', // 19
  'test/entry-points.e2e-spec.ts', // 19
  'test/plugin-project.e2e-spec.ts', // 17
  'test/sandbox-resource-boundary.e2e-spec.ts', // 16
  'test/broker-scale.e2e-spec.ts', // 16
  'test/containers-many-processes.e2e-spec.ts', // 14
  'test/file-search-delete-growth.e2e-spec.ts', // 14 (loaded machine)
  'test/item-shapes.e2e-spec.ts', // 12.5 (loaded machine)
  'test/optional-modules.e2e-spec.ts', // 12.4 (loaded machine)
  'test/code-interpreter-jupyter.e2e-spec.ts', // 14
  'test/sandbox-growth.e2e-spec.ts', // 11
  'test/file-search-api.e2e-spec.ts', // 11
  'test/file-search-jobs.e2e-spec.ts', // 11
  'test/image-assumptions.e2e-spec.ts', // 11
  'test/graceful-drain.e2e-spec.ts', // 11
  'test/first-run.e2e-spec.ts', // 10.7 (loaded machine)
  'test/ingestion-event-loop.e2e-spec.ts', // 10
  'test/workers-shared.e2e-spec.ts', // 10
  'test/batches.e2e-spec.ts', // 8
  'test/backpressure.e2e-spec.ts', // 8
  'test/batches-fairness.e2e-spec.ts', // 8
  'libs/tools/code-interpreter/sandbox/cpython/cpython-sandbox.backend.spec.ts', // 4 (90 s of wall)
  'libs/tools/file-search/storage/file-search.store.spec.ts', // 5 (55 s of wall)
  // Not measured on 2026-12-07; in their earlier order.
  'test/usage-prometheus.e2e-spec.ts',
  'test/primary-modules.e2e-spec.ts',
  'test/openapi.e2e-spec.ts',
];

export default class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = SLOW_FIRST.findIndex((suffix) => test.path.endsWith(suffix));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    const ordered = super.sort(tests);
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
